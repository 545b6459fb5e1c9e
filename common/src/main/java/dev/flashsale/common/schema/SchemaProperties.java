package dev.flashsale.worker.schema;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.schema.*: how long a starting worker waits for the migration step to bring the schema to its version.
 *
 * @param waitTimeout longest wait before the worker gives up and exits with a message naming both versions
 * @param pollInterval pause between two looks at the schema history
 */
@ConfigurationProperties("app.schema")
record SchemaProperties(
        @DefaultValue("5m") Duration waitTimeout,
        @DefaultValue("2s") Duration pollInterval) {

    SchemaProperties {
        if (waitTimeout.isNegative() || pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException(
                    "app.schema.wait-timeout must not be negative, app.schema.poll-interval must be positive");
        }
    }
}
