package dev.flashsale.api;

import org.junit.jupiter.api.Test;
import org.springframework.modulith.core.ApplicationModules;
import org.springframework.modulith.docs.Documenter;

/**
 * The feature packages of {@code order-api} as Spring Modulith's application modules: no cycle between
 * them, and no module reaching into another's internals. Beside the ArchUnit rules of
 * {@link ArchitectureTests}; the module documentation goes to target/spring-modulith-docs.
 */
class ModularityTests {

    private static final ApplicationModules MODULES = ApplicationModules.of(OrderApiApplication.class);

    @Test
    void the_feature_packages_are_modules_without_cycles_or_reaches_into_internals() {
        MODULES.verify();
    }

    @Test
    void the_module_documentation_is_written() {
        new Documenter(MODULES).writeDocumentation();
    }
}
