package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.stock.InstanceLeases;
import dev.flashsale.common.support.PrivateRedis;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The scripts every purchase runs (the throttle with the key's binding, the reservation) wait for Redis
 * without a timer of their own (common's ScriptCalls), on a Redis of the test's own (port 6392): Lettuce's
 * command timeout must still end the wait, and a Redis that lost its script cache must still sell.
 */
class RedisStallIntegrationTests extends ApiIntegrationTest {

    @Autowired
    InstanceLeases leases;

    private static final PrivateRedis REDIS = PrivateRedis.start(6392);

    @DynamicPropertySource
    static void privateRedis(DynamicPropertyRegistry registry) {
        REDIS.register(registry);
        registry.add("spring.data.redis.timeout", () -> "500ms");
    }

    @AfterAll
    static void stop() throws Exception {
        REDIS.close();
    }

    @Test
    void a_purchase_while_redis_stalls_answers_503_within_the_command_timeout_not_when_redis_wakes() throws Exception {
        long sale = api.createSale(10, 2);
        assertThat(api.purchase(sale, "early-" + sale, 1).status()).isEqualTo(201);

        REDIS.cli("CLIENT", "PAUSE", "5000", "ALL");
        long started = System.nanoTime();
        Api.Response plain = api.purchase(sale, "stalled-" + sale, 1);
        Api.Response keyed = api.purchase(sale, "stalled-keyed-" + sale, 1, "Idempotency-Key", "stall-" + sale);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        REDIS.cli("CLIENT", "UNPAUSE");

        assertThat(plain.status()).isEqualTo(503);
        assertThat(keyed.status()).isEqualTo(503);
        // Each waited at most two command timeouts (the throttle, then the reservation), not the 5 s pause.
        assertThat(took).isLessThan(Duration.ofMillis(3500));
        assertThat(api.purchase(sale, "later-" + sale, 1).status()).isEqualTo(201);
    }

    /**
     * Issue 37: an ASYNC reserve that got no answer may have run: Redis still holds the call, and runs it when
     * it wakes. Its shopper is told the outcome is unknown, with the order's Location, never "nothing was
     * reserved": the reservation it made is published by the reconciler past its grace (order-worker's
     * ReconcilerIntegrationTests), so the order may well exist.
     */
    @Test
    void an_async_purchase_whose_reserve_got_no_answer_is_answered_unknown_with_the_order_it_may_have_made()
            throws Exception {
        long sale = api.createSale(10, 2);
        assertThat(api.purchase(sale, "early-async-" + sale, 1).status()).isEqualTo(201);
        api.setMode("ASYNC");
        try {
            REDIS.cli("CLIENT", "PAUSE", "2000", "ALL");
            Api.Response stalled = api.purchase(sale, "stalled-async-" + sale, 1);
            REDIS.cli("CLIENT", "UNPAUSE");

            assertThat(stalled.status()).as(stalled.toString()).isEqualTo(503);
            assertThat(stalled.code()).isEqualTo("OUTCOME_UNKNOWN");
            String order = stalled.text("orderId");
            assertThat(stalled.header("Location"))
                    .hasValueSatisfying(location -> assertThat(location).endsWith("/orders/" + order));
            await().atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(REDIS.cli("HGET", "{sale:" + sale + "}:orders", order))
                            .as("the call ran once Redis woke")
                            .startsWith("RESERVED:ASYNC:"));
            assertThat(REDIS.cli("HGET", "{sale:" + sale + "}", "remaining")).isEqualTo("8");
        } finally {
            api.setMode("SYNC");
        }
    }

    /**
     * Decision 0029: the reconciler settles at once what a lapsed instance held, so the instance beats its
     * lease and names itself in each record its requests reserve.
     */
    @Test
    void the_instance_beats_its_lease_and_names_itself_in_the_records_its_requests_reserve() throws Exception {
        await().atMost(Duration.ofSeconds(3))
                .untilAsserted(() -> assertThat(REDIS.cli("ZSCORE", "instances", leases.instance()))
                        .matches("\\d+"));
        long sale = api.createSale(10, 2);
        api.setMode("ASYNC");
        try {
            Api.Response accepted = api.purchase(sale, "held-" + sale, 1);
            assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
            // No worker runs here: the record stays PUBLISHED, and keeps the instance its request reserved on.
            assertThat(REDIS.cli("HGET", "{sale:" + sale + "}:orders", accepted.text("orderId")))
                    .matches("PUBLISHED:ASYNC::1:\\d+@" + leases.instance() + ":held-" + sale);
        } finally {
            api.setMode("SYNC");
        }
    }

    @Test
    void a_redis_that_lost_its_script_cache_still_sells() throws Exception {
        long sale = api.createSale(10, 2);
        REDIS.cli("SCRIPT", "FLUSH");

        assertThat(api.purchase(sale, "plain-" + sale, 1).status()).isEqualTo(201);
        REDIS.cli("SCRIPT", "FLUSH");
        assertThat(api.purchase(sale, "keyed-" + sale, 1, "Idempotency-Key", "flushed-" + sale)
                        .status())
                .isEqualTo(201);
        assertThat(REDIS.cli("HGET", "{sale:" + sale + "}", "remaining")).isEqualTo("8");
    }
}
