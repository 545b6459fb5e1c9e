package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.TestTopology;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The queues as the broker declared them (its management API), not as the code means them: a classic
 * queue, or a missing argument, would lose the guarantees the failure table promises.
 */
class OrderQueueIntegrationTests extends ApiIntegrationTest {

    @Value("${app.ops.broker-management-url}")
    String management;

    @Value("${app.ops.broker-user}")
    String user;

    @Value("${app.ops.broker-password}")
    String password;

    private JsonNode declared(String property) throws Exception {
        String name = TestTopology.properties().get(property);
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create(management + "/api/queues/%2F/" + URLEncoder.encode(name, StandardCharsets.UTF_8)))
                .header(
                        "Authorization",
                        "Basic "
                                + Base64.getEncoder()
                                        .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)))
                .build();
        HttpResponse<String> response;
        try (HttpClient http = HttpClient.newHttpClient()) {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        }
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JsonMapper.builder().build().readTree(response.body());
    }

    @Test
    void the_order_queue_is_a_quorum_queue_that_dead_letters_at_least_once_and_never_expires_a_message()
            throws Exception {
        JsonNode queue = declared("app.messaging.queue");

        assertThat(queue.path("type").asString()).isEqualTo("quorum");
        assertThat(queue.path("durable").asBoolean()).isTrue();
        JsonNode arguments = queue.path("arguments");
        assertThat(arguments.path("x-queue-type").asString()).isEqualTo("quorum");
        assertThat(arguments.path("x-delivery-limit").asInt()).isEqualTo(20);
        assertThat(arguments.path("x-dead-letter-exchange").asString())
                .isEqualTo(TestTopology.properties().get("app.messaging.dead-letter-exchange"));
        assertThat(arguments.path("x-dead-letter-strategy").asString()).isEqualTo("at-least-once");
        assertThat(arguments.path("x-overflow").asString()).isEqualTo("reject-publish");
        assertThat(arguments.has("x-message-ttl")).as("a backlog never expires").isFalse();
    }

    @Test
    void the_retry_queue_returns_each_message_to_the_order_queue_after_its_delay() throws Exception {
        JsonNode queue = declared("app.messaging.retry-queue");

        assertThat(queue.path("type").asString()).isEqualTo("quorum");
        JsonNode arguments = queue.path("arguments");
        assertThat(arguments.path("x-message-ttl").asInt()).isEqualTo(5_000);
        assertThat(arguments.path("x-dead-letter-exchange").asString())
                .isEqualTo(TestTopology.properties().get("app.messaging.exchange"));
        assertThat(arguments.path("x-dead-letter-routing-key").asString()).isEqualTo(TestTopology.queue());
        assertThat(arguments.path("x-dead-letter-strategy").asString()).isEqualTo("at-least-once");
        assertThat(arguments.path("x-overflow").asString()).isEqualTo("reject-publish");
    }

    @Test
    void the_dead_letter_queue_is_a_quorum_queue() throws Exception {
        assertThat(declared("app.messaging.dead-letter-queue").path("type").asString())
                .isEqualTo("quorum");
    }
}
