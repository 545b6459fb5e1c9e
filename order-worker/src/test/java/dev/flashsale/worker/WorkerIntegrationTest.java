package dev.flashsale.worker;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A worker against the real local services. Each test class also needs its own
 * {@code @DynamicPropertySource} calling {@link IsolatedTopology#register}. The scheduled reconciler is pushed
 * out of the way: it would reconcile every sale in the shared database, other people's too; reconciler
 * tests reconcile their own sale.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@SpringBootTest(
        classes = OrderWorkerApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"app.reconciler.interval=1h"})
@Import(WorkerTestConfiguration.class)
@DirtiesContext
public @interface WorkerIntegrationTest {}
