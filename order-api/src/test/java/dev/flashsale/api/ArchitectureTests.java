package dev.flashsale.api;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

class ArchitectureTests {

    private static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.flashsale");

    @Test
    void the_shared_kernel_knows_no_application_and_no_web() {
        noClasses()
                .that()
                .resideInAPackage("dev.flashsale.common..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.flashsale.api..", "dev.flashsale.worker..", "org.springframework.web..")
                .check(CLASSES);
    }

    @Test
    void only_the_mode_feature_decides_the_mode_and_only_the_sale_feature_touches_its_tables() {
        classes()
                .that()
                .haveSimpleName("SaleRepository")
                .should()
                .onlyBeAccessed()
                .byClassesThat()
                .resideInAPackage("dev.flashsale.api.sale..")
                .check(CLASSES);
        noClasses()
                .that()
                .resideOutsideOfPackage("dev.flashsale.api.mode..")
                .should()
                .dependOnClassesThat()
                .haveSimpleName("CapacityModel")
                .check(CLASSES);
    }

    @Test
    void feature_packages_depend_on_each_other_without_cycles() {
        slices().matching("dev.flashsale.api.(*)..").should().beFreeOfCycles().check(CLASSES);
        slices().matching("dev.flashsale.common.(*)..")
                .should()
                .beFreeOfCycles()
                .check(CLASSES);
    }

    @Test
    void stock_scripts_are_run_only_through_the_stock_ledger() {
        // Two scripts touch a shopper's own keys and no stock: the purchase throttle's (its counter and the
        // Idempotency-Key's binding) and the binding's compare-and-set rebind (IdempotencyKeys).
        noClasses()
                .that()
                .resideInAPackage("dev.flashsale.api..")
                .and()
                .resideOutsideOfPackage("dev.flashsale.api.throttle..")
                .and()
                .doNotHaveSimpleName("IdempotencyKeys")
                .should()
                .dependOnClassesThat()
                .haveNameMatching(".*RedisScript.*")
                .check(CLASSES);
    }
}
