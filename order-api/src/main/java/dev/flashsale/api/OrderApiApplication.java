package dev.flashsale.api;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The API's entry point. What the whole application needs (the shared kernel, caching, scheduling) is on
 * {@link ApiConfiguration}, not here, so that a test slice such as {@code @WebMvcTest} leaves it out.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class OrderApiApplication {

    public static void main(String[] args) {
        SpringApplication.run(OrderApiApplication.class, args);
    }
}
