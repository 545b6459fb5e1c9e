package dev.flashsale.common.schema;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.schema.*: who brings the schema to this build's version, and how long an application that does not
 * waits for it.
 *
 * @param migrate whether the API migrates at start-up itself (local runs and tests); deployments run the
 *     migration step first (Kubernetes: the migration Job; Compose: the migrate service) and the API waits,
 *     like the worker, which never migrates
 * @param waitTimeout longest wait before the application gives up and exits with a message naming both
 *     versions
 * @param pollInterval pause between two looks at the schema history
 */
@ConfigurationProperties("app.schema")
public record SchemaProperties(
        @DefaultValue("false") boolean migrate,
        @DefaultValue("5m") Duration waitTimeout,
        @DefaultValue("2s") Duration pollInterval) {

    public SchemaProperties {
        if (waitTimeout.isNegative() || pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException(
                    "app.schema.wait-timeout must not be negative, app.schema.poll-interval must be positive");
        }
    }
}
