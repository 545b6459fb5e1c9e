package dev.flashsale.worker;

import dev.flashsale.common.CommonConfiguration;
import dev.flashsale.common.schema.SchemaProperties;
import dev.flashsale.common.schema.SchemaWait;
import javax.sql.DataSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The worker fleet: drains the order queue into Postgres and settles abandoned reservations. */
@SpringBootApplication
@Import(CommonConfiguration.class)
@EnableScheduling
@ConfigurationPropertiesScan
public class OrderWorkerApplication {

    public static void main(String[] args) {
        SpringApplication.run(OrderWorkerApplication.class, args);
    }

    /** The worker never migrates: it waits for the migration step, then validates the schema. */
    @Bean
    FlywayMigrationStrategy schemaWait(SchemaProperties schema) {
        return new SchemaWait(schema, "worker");
    }

    /** Every transaction bounded in Postgres, through a pooler too (replaces Boot's JdbcTransactionManager). */
    @Bean
    JdbcTransactionManager transactionManager(DataSource dataSource, PostgresBounds bounds) {
        return new BoundedTransactions(dataSource, bounds);
    }
}
