package dev.flashsale.api.schema;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;

/**
 * Migrates the schema to this build's version and exits: the deployment's migration step (the
 * {@code order-api-migrate} Job in Kubernetes, run before the rollout; the {@code migrate} service in Compose),
 * so Flyway runs once per release, never inside a start-up probe, and the API and worker pods wait for their
 * schema version ({@link SchemaAtStartup}). Same datasource and Flyway settings as the API, nothing else
 * started. Run from the image's extracted layers:
 *
 * <pre>java -cp order-api.jar dev.flashsale.api.schema.SchemaMigration</pre>
 */
@ImportAutoConfiguration({DataSourceAutoConfiguration.class, FlywayAutoConfiguration.class})
public final class SchemaMigration {

    private SchemaMigration() {}

    public static void main(String[] args) {
        new SpringApplicationBuilder(SchemaMigration.class)
                .web(WebApplicationType.NONE)
                .properties("spring.flyway.enabled=true")
                .run(args)
                .close();
    }
}
