package dev.flashsale.worker.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/** A worker that starts before the migration step waits for it, or gives up naming both versions. */
class SchemaWaitIntegrationTests {

    private final String schema = "schema_wait_" + UUID.randomUUID().toString().replace("-", "");

    @Test
    void waits_until_the_migration_step_has_run_then_validates() throws Exception {
        SchemaWait wait = new SchemaWait(new SchemaProperties(Duration.ofSeconds(30), Duration.ofMillis(200)));

        CompletableFuture<Void> worker = CompletableFuture.runAsync(() -> wait.migrate(flyway()));
        Thread.sleep(1_000);
        assertThat(worker).isNotDone();
        flyway().migrate();

        worker.get(20, TimeUnit.SECONDS);
        assertThat(flyway().info().pending()).isEmpty();
    }

    @Test
    void gives_up_after_its_timeout_naming_both_versions() {
        SchemaWait wait = new SchemaWait(new SchemaProperties(Duration.ofMillis(500), Duration.ofMillis(100)));

        assertThatThrownBy(() -> wait.migrate(flyway()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "Schema not ready after PT0.5S: the database is at version none, this worker needs "
                                + flyway().info()
                                        .all()[flyway().info().all().length - 1]
                                        .getVersion())
                .hasMessageContaining("Run the migration step first");
        assertThat(flyway().info().applied()).isEmpty();
    }

    private Flyway flyway() {
        String url = "jdbc:postgresql://%s:%s/%s"
                .formatted(env("DB_HOST", "127.0.0.1"), env("DB_PORT", "5432"), env("DB_NAME", "flashsale"));
        return Flyway.configure()
                .dataSource(url, env("DB_USER", "flashsale"), env("DB_PASSWORD", "flashsale"))
                .schemas(schema)
                .createSchemas(true)
                .load();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
