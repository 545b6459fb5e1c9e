package dev.flashsale.api.support;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;

/** Names isolated to one test run, so runs (and a developer's running system) never share a queue. */
public final class TestTopology {

    public static final String RUN =
            HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    private static final String PREFIX = "flashsale.test." + RUN;

    static {
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(TestTopology::delete));
    }

    private TestTopology() {}

    /**
     * Deletes this run's queues and exchanges from the shared broker when the test JVM exits, undelivered
     * messages and all, with the connection settings the apps read.
     */
    private static void delete() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(env("RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(Integer.parseInt(env("RABBITMQ_PORT", "5672")));
        factory.setUsername(env("RABBITMQ_USER", "flashsale"));
        factory.setPassword(env("RABBITMQ_PASSWORD", "flashsale"));
        factory.setConnectionTimeout(2000);
        try (Connection connection = factory.newConnection();
                Channel channel = connection.createChannel()) {
            for (String queue : new String[] {".requested", ".retry", ".dead"}) {
                channel.queueDelete(PREFIX + queue);
            }
            for (String exchange : new String[] {".orders", ".retry", ".dlx"}) {
                channel.exchangeDelete(PREFIX + exchange);
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            System.err.println("test queues " + PREFIX + ".* not deleted: " + e);
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** The settings both the API under test and the worker process get, as property → value. */
    public static Map<String, String> properties() {
        return Map.of(
                "app.messaging.exchange", PREFIX + ".orders",
                "app.messaging.queue", PREFIX + ".requested",
                "app.messaging.retry-exchange", PREFIX + ".retry",
                "app.messaging.retry-queue", PREFIX + ".retry",
                "app.messaging.dead-letter-exchange", PREFIX + ".dlx",
                "app.messaging.dead-letter-queue", PREFIX + ".dead",
                "app.mode.redis-key", "flashsale:test:" + RUN + ":mode");
    }

    public static String queue() {
        return properties().get("app.messaging.queue");
    }
}
