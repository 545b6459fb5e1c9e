package dev.flashsale.api.support;

import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** Names isolated to one test run, so runs (and a developer's running system) never share a queue. */
public final class TestTopology {

    public static final String RUN =
            HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    private static final String PREFIX = "flashsale.test." + RUN;

    private TestTopology() {}

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
