package dev.flashsale.worker;

import dev.flashsale.common.CommonConfiguration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Import;
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
}
