package dev.flashsale.worker;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import org.springframework.stereotype.Controller;

@AnalyzeClasses(packages = "dev.flashsale.worker", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTests {

    @ArchTest
    static final ArchRule the_worker_serves_no_web_endpoints_of_its_own =
            noClasses().should().beMetaAnnotatedWith(Controller.class);

    @ArchTest
    static final ArchRule feature_packages_depend_on_each_other_without_cycles =
            slices().matching("dev.flashsale.worker.(*)..").should().beFreeOfCycles();

    @ArchTest
    static final ArchRule draining_does_not_depend_on_reconciling = noClasses()
            .that()
            .resideInAPackage("..worker.drain..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("..worker.reconcile..");

    @ArchTest
    static final ArchRule reconciling_does_not_depend_on_draining = noClasses()
            .that()
            .resideInAPackage("..worker.reconcile..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("..worker.drain..");
}
