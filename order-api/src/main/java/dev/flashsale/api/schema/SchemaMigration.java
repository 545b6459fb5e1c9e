package dev.flashsale.api.schema;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;

/**
 * Migrates the schema to this build's version and exits: the deployment's migration step (the API pod's
 * init container in Kubernetes, the {@code migrate} service in Compose), so Flyway never runs inside a
 * start-up probe and workers never start before their schema. Same datasource and Flyway settings as the
 * API, nothing else started. Run from the image's extracted layers:
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
