package dev.flashsale.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The pages a newcomer reads first name every Lua script there is, and no other (README.md#architecture,
 * docs/architecture.md#the-design): the list in the {@code common/} line is checked against the scripts in
 * the resources, so a script added or renamed fails here until the pages say so.
 */
class ScriptListTests {

    private static final Path ROOT = Path.of("..");
    private static final List<Path> SCRIPT_FOLDERS =
            List.of(Path.of("common/src/main/resources/redis"), Path.of("order-api/src/main/resources/redis"));
    private static final Pattern SCRIPT_LIST = Pattern.compile("Lua scripts of a sale \\(([^)]*)\\)");
    private static final Pattern NAME = Pattern.compile("`(\\w+)`");

    @ParameterizedTest
    @ValueSource(strings = {"README.md", "docs/architecture.md"})
    void the_common_line_names_every_lua_script_and_no_other(String page) throws IOException {
        String text = Files.readString(ROOT.resolve(page)).replaceAll("\\s+", " ");
        Matcher list = SCRIPT_LIST.matcher(text);
        assertThat(list.find())
                .as("%s: no list of the Lua scripts of a sale", page)
                .isTrue();
        Set<String> named =
                NAME.matcher(list.group(1)).results().map(name -> name.group(1)).collect(Collectors.toSet());

        assertThat(named).as(page).containsExactlyInAnyOrderElementsOf(scripts());
    }

    private static Set<String> scripts() throws IOException {
        Set<String> scripts = new TreeSet<>();
        for (Path folder : SCRIPT_FOLDERS) {
            try (Stream<Path> files = Files.list(ROOT.resolve(folder))) {
                files.map(file -> file.getFileName().toString())
                        .filter(name -> name.endsWith(".lua"))
                        .map(name -> name.substring(0, name.length() - ".lua".length()))
                        .forEach(scripts::add);
            }
        }
        assertThat(scripts).as("the Lua scripts in %s", SCRIPT_FOLDERS).isNotEmpty();
        return scripts;
    }
}
