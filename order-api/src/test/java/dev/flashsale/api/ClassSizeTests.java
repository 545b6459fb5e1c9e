package dev.flashsale.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A class does one job: no production source file over 300 lines, no class with more than 7 collaborators
 * (constructor parameters), in all three modules. The worker's classes are read from its build output, which
 * the reactor builds before this module. An exception is named here with the reason it is one, and fails the
 * build once it is no longer needed, so the list only shrinks.
 */
class ClassSizeTests {

    private static final int MAX_LINES = 300;
    private static final int MAX_COLLABORATORS = 7;
    private static final List<Path> SOURCES = Stream.of("common", "order-worker", "order-api")
            .map(module -> Path.of("..", module, "src", "main", "java"))
            .toList();
    private static final Path WORKER_CLASSES = Path.of("..", "order-worker", "target", "classes");

    /** Source files allowed over {@link #MAX_LINES}, each with its reason. */
    private static final Map<String, String> LONG_FILES = Map.of();

    /** Classes allowed over {@link #MAX_COLLABORATORS}, each with its reason. */
    private static final Map<String, String> WIDE_CLASSES = Map.of();

    @Test
    void no_production_source_file_is_longer_than_300_lines() throws IOException {
        Map<String, Long> tooLong = new TreeMap<>();
        for (Path root : SOURCES) {
            assertThat(root).as("sources of a module").isDirectory();
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(file -> file.toString().endsWith(".java")).forEach(file -> {
                    long lines = lines(file);
                    if (lines > MAX_LINES) {
                        tooLong.put(file.getFileName().toString().replace(".java", ""), lines);
                    }
                });
            }
        }
        assertThat(tooLong.keySet()).as("over %d lines: %s", MAX_LINES, tooLong).isEqualTo(LONG_FILES.keySet());
    }

    @Test
    void no_class_has_more_than_7_collaborators() {
        assertThat(WORKER_CLASSES)
                .as("the worker's classes (build order-worker first)")
                .isDirectory();
        ClassFileImporter importer =
                new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS);
        JavaClasses api = importer.importPackages("dev.flashsale.api", "dev.flashsale.common");
        JavaClasses worker = importer.importPath(WORKER_CLASSES);
        Map<String, Integer> tooWide = new TreeMap<>();
        Stream.concat(api.stream(), worker.stream())
                .filter(type -> type.getPackageName().startsWith("dev.flashsale"))
                .filter(type -> !type.isRecord() && !type.isEnum())
                .filter(type -> !type.isAnonymousClass() && !type.isLocalClass())
                .forEach(type -> {
                    int widest = type.getConstructors().stream()
                            .mapToInt(ClassSizeTests::collaborators)
                            .max()
                            .orElse(0);
                    if (widest > MAX_COLLABORATORS) {
                        tooWide.put(type.getSimpleName(), widest);
                    }
                });
        assertThat(tooWide.keySet())
                .as("over %d collaborators: %s", MAX_COLLABORATORS, tooWide)
                .isEqualTo(WIDE_CLASSES.keySet());
    }

    /** A constructor's parameters, less the outer instance an inner class's constructor is given. */
    private static int collaborators(JavaConstructor constructor) {
        JavaClass owner = constructor.getOwner();
        int parameters = constructor.getRawParameterTypes().size();
        return owner.isInnerClass() ? parameters - 1 : parameters;
    }

    private static long lines(Path file) {
        try (Stream<String> lines = Files.lines(file)) {
            return lines.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
