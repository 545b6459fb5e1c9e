package dev.flashsale.api.support;

import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The API on a random port against the real local Postgres, Redis and RabbitMQ (scripts/services.sh up),
 * with a queue topology and mode flag of its own, in the {@code local} profile (the committed secret).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("local")
public abstract class ApiIntegrationTest {

    @LocalServerPort
    protected int port;

    @Autowired
    protected JdbcClient jdbc;

    @Autowired
    protected StringRedisTemplate redis;

    protected Api api;

    @DynamicPropertySource
    static void isolatedTopology(DynamicPropertyRegistry registry) {
        TestTopology.properties().forEach((key, value) -> registry.add(key, () -> value));
        registry.add("app.mode.refresh-interval", () -> "100ms");
        // Tests burst one shopper on purpose (limits, replays); the throttle has tests of its own.
        registry.add("app.throttle.purchases", () -> "100000");
        // The shared Redis and Postgres hold other tests' sales that are behind on purpose (stock tampered
        // with, Postgres holding fewer units): the rebuild watch looks once an hour; the tests of Redis loss
        // run it on a Redis of their own (through the placeholder: a subclass cannot override a key set here).
        registry.add("app.rebuild.watch-interval", () -> "${test.rebuild.watch-interval:1h}");
    }

    @BeforeEach
    void client() {
        api = new Api(port);
    }

    protected long pgConfirmedOrders(long saleId) {
        return jdbc.sql("select count(*) from purchase_order where sale_id = :id and status = 'CONFIRMED'")
                .param("id", saleId)
                .query(Long.class)
                .single();
    }

    protected long pgRemaining(long saleId) {
        return jdbc.sql("select sum(remaining) from sale_stock where sale_id = :id")
                .param("id", saleId)
                .query(Long.class)
                .single();
    }

    protected long redisRemaining(long saleId) {
        Object remaining = redis.opsForHash().get("{sale:" + saleId + "}", "remaining");
        return remaining == null ? -1 : Long.parseLong((String) remaining);
    }
}
