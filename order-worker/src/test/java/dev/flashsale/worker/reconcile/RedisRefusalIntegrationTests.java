package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.support.PrivateRedis;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * Issue 38, path 4: a Redis that refuses the worker's claim, out of memory (maxmemory with noeviction) or out
 * of reach (every write paused past the command timeout), on a Redis of the test's own. A refusal that clears
 * costs a retry, not the order; one that outlasts the retry budget leaves every order of the batch FAILED in
 * Postgres, and the reconciler gives every unit back once Redis answers.
 */
@TestPropertySource(
        properties = {
            "app.worker.max-attempts=2",
            "app.messaging.retry-delay=1s",
            "spring.data.redis.timeout=1s",
            "app.reconciler.handoff-timeout=2s",
            "app.reconciler.queues-quiet=0s"
        })
class RedisRefusalIntegrationTests extends WorkerIntegrationTest {

    private static final PrivateRedis REDIS = PrivateRedis.start(6481);

    @DynamicPropertySource
    static void privateRedis(DynamicPropertyRegistry registry) {
        REDIS.register(registry);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        REDIS.close();
    }

    @Autowired
    Reconciler reconciler;

    @AfterEach
    void redisTakesWritesAgain() throws Exception {
        REDIS.cli("config", "set", "maxmemory", "0");
        REDIS.cli("client", "unpause");
    }

    /** Three accepted orders of a new sale of five units, their messages confirmed (PUBLISHED), not yet sent. */
    private List<OrderRequested> accepted(long saleId) {
        List<OrderRequested> orders = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            OrderRequested order = shop.reserve(saleId, "shopper-" + i, Instant.now());
            ledger.advance(saleId, order.orderId(), EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED);
            orders.add(order);
        }
        return orders;
    }

    @Test
    void a_claim_refused_for_lack_of_memory_is_retried_and_written_once_memory_frees() throws Exception {
        long saleId = shop.openSale(5, 1);
        List<OrderRequested> orders = accepted(saleId);
        assertThat(REDIS.cli("config", "set", "maxmemory", "1")).isEqualTo("OK");

        shop.publishBatch(orders);
        Thread.sleep(600); // the first attempt meets the refusal; its retry comes back after 1 s
        REDIS.cli("config", "set", "maxmemory", "0");

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, 3L));
            // Redis's hold ends after Postgres's commit.
            assertThat(orders)
                    .allSatisfy(
                            order -> assertThat(shop.reservationState(order)).isEqualTo(ReservationState.CONFIRMED));
        });
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(5, 2, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(2);
    }

    @Test
    void a_batch_redis_refuses_for_the_whole_retry_budget_is_recorded_failed_whole_and_every_unit_comes_back()
            throws Exception {
        long saleId = shop.openSale(5, 1);
        List<OrderRequested> orders = accepted(saleId);
        // Two attempts, each a claim cut at the 1 s command timeout and a retry 1 s later: over in about 5 s.
        Instant paused = Instant.now();
        assertThat(REDIS.cli("client", "pause", "8000", "write")).isEqualTo("OK");

        shop.publishBatch(orders);

        await().atMost(Duration.ofSeconds(8))
                .untilAsserted(() -> assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.FAILED, 3L)));
        Thread.sleep(Math.max(
                0, Duration.between(Instant.now(), paused.plusSeconds(8)).toMillis()));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            reconciler.reconcile(saleId);
            assertThat(orders)
                    .allSatisfy(
                            order -> assertThat(shop.reservationState(order)).isEqualTo(ReservationState.FAILED));
        });
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(5, 5, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(5);
    }
}
