package dev.flashsale.api.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.ApiIntegrationTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * With a management port configured (MANAGEMENT_PORT; Kubernetes: 8082, which no Service exposes), the
 * metrics scrape is served there and not on the API's port, which shoppers reach.
 */
class ManagementPortIntegrationTests extends ApiIntegrationTest {

    @LocalManagementPort
    int managementPort;

    @DynamicPropertySource
    static void managementPort(DynamicPropertyRegistry registry) {
        registry.add("management.server.port", () -> "0");
    }

    @Test
    void the_prometheus_scrape_is_served_on_the_management_port_only() throws Exception {
        assertThat(managementPort).isNotEqualTo(port);
        assertThat(status(managementPort, "/actuator/prometheus")).isEqualTo(200);
        assertThat(status(port, "/actuator/prometheus")).isEqualTo(404);
        assertThat(status(port, "/actuator/metrics")).isNotEqualTo(200);
    }

    private static int status(int port, String path) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        }
    }
}
