package dev.flashsale.api.schema;

import dev.flashsale.common.schema.SchemaProperties;
import dev.flashsale.common.schema.SchemaWait;
import org.flywaydb.core.Flyway;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.stereotype.Component;

/**
 * The API's schema at start-up. A local run or a test migrates it (app.schema.migrate). A deployment has a
 * migration step ({@link SchemaMigration}: the Kubernetes Job, the Compose service), and its pods wait for
 * their schema version as the workers do: a scale-out pays no Flyway run behind its lock, and a pod started
 * during a Postgres failover waits instead of crash-looping.
 */
@Component
class SchemaAtStartup implements FlywayMigrationStrategy {

    private final SchemaProperties properties;

    SchemaAtStartup(SchemaProperties properties) {
        this.properties = properties;
    }

    @Override
    public void migrate(Flyway flyway) {
        if (properties.migrate()) {
            flyway.migrate();
        } else {
            new SchemaWait(properties, "API").migrate(flyway);
        }
    }
}
