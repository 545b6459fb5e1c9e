package dev.flashsale.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * One word per concept (docs/architecture.md#glossary): a retired name appears nowhere in the repository's
 * code, configuration, metrics, dashboards or docs, except in the glossary's own list of them
 * (docs/architecture.md#retired-names). Raw outputs of past runs are left as they were recorded. A rename
 * that is done adds its line to {@link #RETIRED}.
 */
class RetiredNamesTests {

    private static final Path ROOT = Path.of("..");
    private static final Path ARCHITECTURE = Path.of("docs", "architecture.md");
    private static final Path THIS_TEST =
            Path.of("order-api", "src", "test", "java", "dev", "flashsale", "api", "RetiredNamesTests.java");

    /** Build output, tools' caches, third-party schemas and the raw outputs of past runs (what was, not what is). */
    private static final Set<Path> SKIPPED = Stream.of(
                    ".git",
                    "docs/results/bench",
                    "docs/results/faults",
                    "docs/results/profiles",
                    "docs/results/seeds",
                    "k8s/crd-schemas",
                    "load-tests/results",
                    "ops-tests/results")
            .map(Path::of)
            .collect(Collectors.toUnmodifiableSet());

    private static final Set<String> SKIPPED_NAMES =
            Set.of("target", "node_modules", "__pycache__", ".idea", ".vscode", ".schemathesis", "appendonlydir");
    private static final Set<String> BINARY = Set.of("png", "gz", "jar", "class", "ico", "jpg", "log");

    /** Where a retired name may not appear: any text file, or only the docs (a word of prose). */
    enum Scope {
        EVERYWHERE,
        DOCS
    }

    record Retired(String name, Pattern pattern, Scope scope) {}

    private static final List<Retired> RETIRED = List.of(
            code("PurchaseMode", "\\bPurchaseMode\\b"),
            code("AsyncPurchase.Handoff", "\\bHandoff\\b"),
            code("Reservations.Reserved.Held", "\\bReserved\\.Held\\b|\\brecord Held\\b"),
            code("GroupCommit.Pending", "\\bGroupCommit\\.Pending\\b|\\bclass Pending\\b"),
            code("SaleBatch", "\\bSaleBatch\\b"),
            code("ReservationState.HOLDING", "\\bReservationState\\.HOLDING\\b"),
            code("the holding set", "(?i)\\bholding set\\b"),
            code("the holding metric and alert", "holding[._]oldest|FlashsaleHoldingTooOld"),
            code("hold_sale.lua", "\\bhold_sale\\b"),
            code("holdUntil, holdBy", "\\bhold(Until|By)\\b"),
            code("app.rebuild.hold", "\\bapp\\.rebuild\\.hold\\b|\\bAPP_REBUILD_HOLD\\b"),
            code("package admission", "\\bapi\\.admission\\b|\\bapi/admission\\b|`admission\\."),
            code("AdmissionProperties, PurchaseAdmission", "\\b(AdmissionProperties|PurchaseAdmission)\\b"),
            code("app.admission", "\\bapp\\.admission\\b|\\bAPP_ADMISSION_"),
            code("the door's metrics", "flashsale[._]admission[._]"),
            code("StandingQueueLimit", "\\bStandingQueueLimit\\b"),
            docs("repair", "(?i)\\brepair"));

    @Test
    void no_retired_name_is_used_outside_the_glossary_list_of_them() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            files.filter(Files::isRegularFile)
                    .map(ROOT::relativize)
                    .filter(RetiredNamesTests::scanned)
                    .forEach(file -> found.addAll(retiredNamesIn(file)));
        }
        assertThat(found)
                .as("retired names (docs/architecture.md#retired-names says what replaced each)")
                .isEmpty();
    }

    @Test
    void a_retired_name_in_code_or_in_prose_is_found() {
        assertThat(retiredNamesIn(Path.of("Example.java"), List.of("PurchaseMode path = PurchaseMode.SYNC;")))
                .singleElement(STRING)
                .contains("PurchaseMode");
        assertThat(retiredNamesIn(Path.of("notes.md"), List.of("The watch repairs a sale.")))
                .singleElement(STRING)
                .contains("repair");
        assertThat(retiredNamesIn(
                        Path.of("Example.java"),
                        List.of("The watch repairs a sale; HandoffBacklogIntegrationTests, handoff-timeout.")))
                .as("a word of prose outside the docs, and names that only contain a retired one")
                .isEmpty();
    }

    private static boolean scanned(Path file) {
        for (Path part : file) {
            if (SKIPPED_NAMES.contains(part.toString())) {
                return false;
            }
        }
        String name = file.getFileName().toString();
        String extension = name.contains(".") ? name.substring(name.lastIndexOf('.') + 1) : "";
        return SKIPPED.stream().noneMatch(file::startsWith) && !BINARY.contains(extension) && !file.equals(THIS_TEST);
    }

    private static List<String> retiredNamesIn(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(ROOT.resolve(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (byte b : bytes) {
            if (b == 0) {
                return List.of(); // binary
            }
        }
        List<String> lines = new String(bytes, StandardCharsets.UTF_8).lines().toList();
        if (file.equals(ARCHITECTURE)) {
            lines = withoutRetiredList(lines);
        }
        return retiredNamesIn(file, lines);
    }

    private static List<String> retiredNamesIn(Path file, List<String> lines) {
        boolean doc = file.getFileName().toString().endsWith(".md");
        List<String> found = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            for (Retired retired : RETIRED) {
                if ((doc || retired.scope() == Scope.EVERYWHERE)
                        && retired.pattern().matcher(lines.get(i)).find()) {
                    found.add(file + ":" + (i + 1) + ": " + retired.name() + ": "
                            + lines.get(i).strip());
                }
            }
        }
        return found;
    }

    /** The glossary's list of retired names blanked out (lines kept, so that line numbers stay true). */
    private static List<String> withoutRetiredList(List<String> lines) {
        List<String> kept = new ArrayList<>();
        boolean inList = false;
        for (String line : lines) {
            if (line.startsWith("#")) {
                inList = line.equals("### Retired names");
            }
            kept.add(inList ? "" : line);
        }
        assertThat(kept)
                .as("docs/architecture.md has a section '### Retired names'")
                .isNotEqualTo(lines);
        return kept;
    }

    private static Retired code(String name, String regex) {
        return new Retired(name, Pattern.compile(regex), Scope.EVERYWHERE);
    }

    private static Retired docs(String name, String regex) {
        return new Retired(name, Pattern.compile(regex), Scope.DOCS);
    }
}
