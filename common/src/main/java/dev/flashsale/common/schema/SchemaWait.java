package dev.flashsale.worker.schema;

import java.time.Duration;
import java.time.Instant;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.stereotype.Component;

/**
 * The worker never migrates: the deployment's migration step does (see the API's SchemaMigration). A worker
 * that starts first waits, up to app.schema.wait-timeout, for the schema to reach the version it was built with, then
 * validates it; past the deadline it exits with a message naming both versions instead of crash-looping on a
 * Flyway validation error.
 */
@Component
class SchemaWait implements FlywayMigrationStrategy {

    private static final Logger log = LoggerFactory.getLogger(SchemaWait.class);

    private final SchemaProperties properties;

    SchemaWait(SchemaProperties properties) {
        this.properties = properties;
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
                state = "the database is at version %s, this worker needs %s"
                        .formatted(version(info.current()), version(pending[pending.length - 1]));
            } catch (FlywayException e) {
                state = "the schema could not be read (" + e.getMessage() + ")";
            }
            if (!Instant.now().isBefore(deadline)) {
                throw new IllegalStateException("Schema not ready after " + properties.waitTimeout() + ": " + state
                        + ". Run the migration step first (Kubernetes: the order-api pods' migrate init container;"
                        + " Compose: the migrate service; locally: start order-api, which migrates).");
            }
            if (!announced) {
                log.info("Waiting up to {} for the schema: {}", properties.waitTimeout(), state);
                announced = true;
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
