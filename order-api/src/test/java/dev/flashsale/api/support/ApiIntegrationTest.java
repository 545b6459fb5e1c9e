package dev.flashsale.api.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.support.PrivateRedis;
import dev.flashsale.common.support.SaleRows;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * The API on a random port against the real local Postgres, Redis and RabbitMQ (scripts/services.sh up),
 * with a queue topology and mode flag of its own, in the {@code local} profile (the committed secret).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("local")
// A line's round of 2 s, not 5: a crowd whose units come back (Postgres refusing them) waits a round per
// wave, and the tests' crowds take several. A subclass's own @TestPropertySource overrides it.
@TestPropertySource(properties = "app.door.line.round=2s")
public abstract class ApiIntegrationTest {

    @LocalServerPort
    protected int port;

    @Autowired
    protected JdbcClient jdbc;

    @Autowired
    protected StringRedisTemplate redis;

    @Autowired
    protected CircuitBreakerRegistry breakers;

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

    /**
     * Points the API at a Redis of the test's own, with the rebuild watch looking every 300 ms and a rebuild's
     * freeze at 1 s; other tests' sales selling now in the shared Postgres stay out of it (recently-sold 0 s),
     * so a missing sale comes back on its next use.
     */
    protected static void rebuildFrom(PrivateRedis redis, DynamicPropertyRegistry registry) {
        redis.register(registry);
        registry.add("app.rebuild.freeze", () -> "1s");
        registry.add("test.rebuild.watch-interval", () -> "300ms");
        registry.add("app.rebuild.recently-sold", () -> "0s");
    }

    @BeforeEach
    void client() {
        api = new Api(port);
    }

    /** Closes every circuit breaker, whatever an earlier test's load did to them. */
    protected void closeBreakers() {
        breakers.getAllCircuitBreakers().forEach(CircuitBreaker::reset);
    }

    /** The state of the order's reservation record in Redis (null once it is gone). */
    protected @Nullable String reservationState(long saleId, Object orderId) {
        Object record = redis.opsForHash().get("{sale:" + saleId + "}:orders", orderId.toString());
        return record == null ? null : ((String) record).substring(0, ((String) record).indexOf(':'));
    }

    /** The answers to purchases made after an outage began, the last one first answered 201 (if any was). */
    protected record Recovery(List<Api.Response> answers, Duration took) {

        /** The first 201 came within {@code bound}, and every purchase before it was refused 503 ({@code why}). */
        public void assertWithin(Duration bound, String why) {
            assertThat(answers).isNotEmpty();
            Api.Response last = answers.getLast();
            assertThat(last.status())
                    .as("the first purchase after %s: %s", took, last)
                    .isEqualTo(201);
            assertThat(took).isLessThanOrEqualTo(bound);
            assertThat(answers.subList(0, answers.size() - 1))
                    .as(why)
                    .allSatisfy(r -> assertThat(r.status()).as(r.toString()).isEqualTo(503));
        }
    }

    /**
     * A new shopper tries to buy one unit of the sale every 200 ms, from {@code since} (a System.nanoTime()),
     * until one is answered 201 or {@code giveUp} has passed since then.
     */
    protected Recovery purchasesUntilOneSucceeds(long sale, long since, Duration giveUp) throws InterruptedException {
        List<Api.Response> answers = new ArrayList<>();
        for (int i = 0; System.nanoTime() - since < giveUp.toNanos(); i++) {
            Api.Response answer = api.purchase(sale, "after-" + sale + "-" + i, 1);
            answers.add(answer);
            if (answer.status() == 201) {
                break;
            }
            Thread.sleep(200);
        }
        return new Recovery(answers, Duration.ofNanos(System.nanoTime() - since));
    }

    protected long pgConfirmedOrders(long saleId) {
        return jdbc.sql("select count(*) from purchase_order where sale_id = :id and status = 'CONFIRMED'")
                .param("id", saleId)
                .query(Long.class)
                .single();
    }

    protected long pgRemaining(long saleId) {
        return SaleRows.remaining(jdbc, saleId);
    }

    protected long redisRemaining(long saleId) {
        Object remaining = redis.opsForHash().get("{sale:" + saleId + "}", "remaining");
        return remaining == null ? -1 : Long.parseLong((String) remaining);
    }
}
