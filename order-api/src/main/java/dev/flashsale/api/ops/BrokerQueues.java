package dev.flashsale.api.ops;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.flashsale.common.messaging.MessagingProperties;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.jspecify.annotations.Nullable;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import tools.jackson.databind.JsonNode;

/**
 * The order queues as the broker's management API sees them: depth (ready and unacknowledged) and the
 * rates at which the API publishes and the workers acknowledge, averaged by the broker over its own
 * sampling window (5 s by default). The same API KEDA reads to scale the workers.
 */
@Component
class BrokerQueues {

    /** What is unknown is left out: numbers when the broker cannot be read, {@code error} when it can. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record QueueView(
            String name,
            @Nullable Long depth,
            @Nullable Long ready,
            @Nullable Long unacknowledged,
            @Nullable Integer consumers,
            @Nullable Double publishRate,
            @Nullable Double ackRate,
            @Nullable String error) {}

    private final RestClient client;
    private final MessagingProperties names;
    private final String vhost;

    BrokerQueues(OpsProperties properties, MessagingProperties names) {
        HttpClient http = HttpClient.newBuilder()
                .connectTimeout(properties.brokerTimeout())
                .build();
        JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(http);
        requests.setReadTimeout(properties.brokerTimeout());
        String credentials = Base64.getEncoder()
                .encodeToString(
                        (properties.brokerUser() + ":" + properties.brokerPassword()).getBytes(StandardCharsets.UTF_8));
        this.client = RestClient.builder()
                .baseUrl(properties.brokerManagementUrl().toString())
                .requestFactory(requests)
                .defaultHeader("Authorization", "Basic " + credentials)
                .build();
        this.names = names;
        this.vhost = properties.brokerVhost();
    }

    QueueView orders() {
        return queue(names.queue());
    }

    QueueView retries() {
        return queue(names.retryQueue());
    }

    QueueView deadLetters() {
        return queue(names.deadLetterQueue());
    }

    private QueueView queue(String name) {
        try {
            // URI variables are encoded whole: the default vhost "/" goes out as %2F, as the API wants.
            JsonNode queue = client.get()
                    .uri("/api/queues/{vhost}/{name}", vhost, name)
                    .retrieve()
                    .body(JsonNode.class);
            if (queue == null) {
                return unknown(name, "empty answer from the broker");
            }
            JsonNode stats = queue.path("message_stats");
            return new QueueView(
                    name,
                    queue.path("messages").asLong(0),
                    queue.path("messages_ready").asLong(0),
                    queue.path("messages_unacknowledged").asLong(0),
                    queue.path("consumers").asInt(0),
                    stats.path("publish_details").path("rate").asDouble(0),
                    stats.path("ack_details").path("rate").asDouble(0),
                    null);
        } catch (RestClientException e) {
            return unknown(
                    name, "broker management API not readable: " + e.getClass().getSimpleName());
        }
    }

    static QueueView unknown(String name, String error) {
        return new QueueView(name, null, null, null, null, null, null, error);
    }
}
