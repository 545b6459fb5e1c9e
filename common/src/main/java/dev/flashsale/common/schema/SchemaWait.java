package dev.flashsale.common.schema;

import java.time.Duration;
import java.time.Instant;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;

/**
 * An application that does not migrate (the worker always, the API in deployments) waits, up to
 * app.schema.wait-timeout, for the migration step to bring the schema to the version it was built with, then
 * validates it. A database it cannot reach (a Postgres failover, a pooler restarting) is one more look later,
 * not a crash: pods started meanwhile wait instead of crash-looping. Past the deadline it exits with a
 * message naming both versions.
 */
public final class SchemaWait implements FlywayMigrationStrategy {

    private static final Logger log = LoggerFactory.getLogger(SchemaWait.class);

    private final SchemaProperties properties;
    private final String application;

    public SchemaWait(SchemaProperties properties, String application) {
        this.properties = properties;
        this.application = application;
    }

    @Override
    public void migrate(Flyway flyway) {
        Instant deadline = Instant.now().plus(properties.waitTimeout());
        boolean announced = false;
        while (true) {
            String state;
            try {
                MigrationInfoService info = flyway.info();
                MigrationInfo[] pending = info.pending();
                if (pending.length == 0) {
                    flyway.validate();
                    if (announced) {
                        log.info("Schema ready at version {}", version(info.current()));
                    }
                    return;
                }
                state = "the database is at version %s, this %s needs %s"
                        .formatted(version(info.current()), application, version(pending[pending.length - 1]));
            } catch (RuntimeException e) {
                // Flyway's own exceptions, and the pool's or the driver's when Postgres cannot be reached.
                state = "the schema could not be read (" + e.getMessage() + ")";
            }
            if (!Instant.now().isBefore(deadline)) {
                throw new IllegalStateException("Schema not ready after " + properties.waitTimeout() + ": " + state
                        + ". Run the migration step first (Kubernetes: the order-api-migrate Job, k8s/README.md;"
                        + " Compose: the migrate service; locally: start order-api, which migrates).");
            }
            if (!announced) {
                log.info("Waiting up to {} for the schema: {}", properties.waitTimeout(), state);
                announced = true;
            } else {
                log.debug("Still waiting for the schema: {}", state);
            }
            sleep(properties.pollInterval());
        }
    }

    private static String version(@Nullable MigrationInfo info) {
        return info == null || info.getVersion() == null
                ? "none"
                : info.getVersion().getVersion();
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for the schema", e);
        }
    }
}
