package dev.flashsale.common.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * An application that starts before the migration step waits for it, through a Postgres it cannot reach
 * for a while, or gives up naming both versions.
 */
class SchemaWaitIntegrationTests {

    private final String schema = "schema_wait_" + UUID.randomUUID().toString().replace("-", "");

    @Test
    void waits_until_the_migration_step_has_run_then_validates() throws Exception {
        SchemaWait wait = new SchemaWait(properties(Duration.ofSeconds(30)), "worker");

        CompletableFuture<Void> starting = CompletableFuture.runAsync(() -> wait.migrate(flyway(database())));
        Thread.sleep(1_000);
        assertThat(starting).isNotDone();
        flyway(database()).migrate();

        starting.get(20, TimeUnit.SECONDS);
        assertThat(flyway(database()).info().pending()).isEmpty();
    }

    @Test
    void waits_through_a_postgres_failover_instead_of_crashing() throws Exception {
        flyway(database()).migrate();
        // During a failover no connection opens: the driver refuses (SQLException, which Flyway wraps) or
        // the pool cannot start (Hikari's PoolInitializationException, a RuntimeException).
        Unreachable postgres = new Unreachable(database());
        SchemaWait wait = new SchemaWait(properties(Duration.ofSeconds(30)), "API");

        CompletableFuture<Void> starting = CompletableFuture.runAsync(() -> wait.migrate(flyway(postgres)));
        Thread.sleep(1_500);
        assertThat(starting).isNotDone();
        assertThat(postgres.refused.get()).isGreaterThanOrEqualTo(2);
        postgres.down.set(false);

        starting.get(20, TimeUnit.SECONDS);
    }

    @Test
    void gives_up_after_its_timeout_naming_both_versions() {
        SchemaWait wait = new SchemaWait(properties(Duration.ofMillis(500)), "worker");

        assertThatThrownBy(() -> wait.migrate(flyway(database())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "Schema not ready after PT0.5S: the database is at version none, this worker needs "
                                + flyway(database())
                                        .info()
                                        .all()[flyway(database()).info().all().length - 1]
                                        .getVersion())
                .hasMessageContaining("Run the migration step first");
        assertThat(flyway(database()).info().applied()).isEmpty();
    }

    private static SchemaProperties properties(Duration waitTimeout) {
        return new SchemaProperties(false, waitTimeout, Duration.ofMillis(100));
    }

    private Flyway flyway(DataSource dataSource) {
        return Flyway.configure()
                .dataSource(dataSource)
                .schemas(schema)
                .createSchemas(true)
                .load();
    }

    private static DataSource database() {
        String url = "jdbc:postgresql://%s:%s/%s"
                .formatted(env("DB_HOST", "127.0.0.1"), env("DB_PORT", "5432"), env("DB_NAME", "flashsale"));
        return new DriverManagerDataSource(url, env("DB_USER", "flashsale"), env("DB_PASSWORD", "flashsale"));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Postgres in a failover: every other attempt refused by the driver, the others by the pool. */
    private static final class Unreachable extends DelegatingDataSource {

        final AtomicBoolean down = new AtomicBoolean(true);
        final AtomicInteger refused = new AtomicInteger();

        Unreachable(DataSource target) {
            super(target);
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (down.get()) {
                if (refused.incrementAndGet() % 2 == 0) {
                    throw new IllegalStateException("Failed to initialize pool: Connection refused");
                }
                throw new SQLException("Connection to 127.0.0.1:5432 refused", "08001");
            }
            return super.getConnection();
        }
    }
}
