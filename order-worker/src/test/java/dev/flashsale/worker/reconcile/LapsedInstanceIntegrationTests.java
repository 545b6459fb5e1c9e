package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.InstanceLeases;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveRequest;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.StockProperties;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.TestPropertySource;

/**
 * Issue 37: an API instance killed mid-crowd. The reservations its requests held (a SYNC write, an ASYNC order
 * not yet published) are settled by the scheduled lease check once another instance has beaten a lease after
 * it, long before the grace (a minute here, so that only the lease can explain it); a live instance's are left
 * alone, and so are a lone instance's.
 */
@TestPropertySource(
        properties = {"app.reconciler.grace=60s", "app.reconciler.instance-lease=1s", "app.reconciler.lease-check=200ms"
        })
class LapsedInstanceIntegrationTests extends WorkerIntegrationTest {

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    StockProperties stockProperties;

    private final ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor();

    @BeforeEach
    void noOtherInstance() {
        redis.delete("instances");
    }

    @AfterEach
    void stopBeating() {
        beats.shutdownNow();
        redis.delete("instances");
    }

    /** A purchase of one unit the instance {@code by} reserves, its record as its request leaves it. */
    private OrderRequested reservedBy(InstanceLeases by, long saleId, String user, PurchasePath mode) {
        OrderRequested order = new OrderRequested(OrderIds.next(), saleId, user, 1, Instant.now(), null, null);
        ReservationState state = mode == PurchasePath.SYNC ? ReservationState.WRITING : ReservationState.RESERVED;
        ReserveResult result = new StockLedger(redis, stockProperties, by)
                .reserveAll(
                        saleId,
                        List.of(new ReserveRequest(
                                order.orderId(), user, 1, mode, order.requestedAt(), false, state, null)))
                .getFirst();
        assertThat(result).isInstanceOf(ReserveResult.Reserved.class);
        return order;
    }

    @Test
    void settles_what_a_lapsed_instance_held_at_once_and_leaves_a_live_ones_alone() throws Exception {
        InstanceLeases killed = new InstanceLeases(redis);
        InstanceLeases alive = new InstanceLeases(redis);
        long saleId = shop.openSale(10, 1);
        OrderRequested writing = reservedBy(killed, saleId, "killed-sync", PurchasePath.SYNC);
        OrderRequested unpublished = reservedBy(killed, saleId, "killed-async", PurchasePath.ASYNC);
        OrderRequested live = reservedBy(alive, saleId, "alive-sync", PurchasePath.SYNC);
        assertThat(ledger.find(saleId, writing.orderId()).orElseThrow().instance())
                .as("the record carries the instance that holds it")
                .isEqualTo(killed.instance());
        killed.beat();
        alive.beat();

        Thread.sleep(1500); // a lease on, nobody beating: a lone stop lapses nobody
        assertThat(shop.reservationState(writing)).isEqualTo(ReservationState.WRITING);
        assertThat(shop.reservationState(unpublished)).isEqualTo(ReservationState.RESERVED);

        beats.scheduleAtFixedRate(alive::beat, 0, 200, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(shop.reservationState(writing)).isEqualTo(ReservationState.RELEASED);
            assertThat(lookup.find(unpublished.orderId()).map(StoredOrder::status))
                    .contains(OrderStatus.CONFIRMED);
        });
        assertThat(lookup.find(writing.orderId())).as("the probe leaves no row").isEmpty();
        assertThat(shop.reservationState(live)).as("a live instance's write").isEqualTo(ReservationState.WRITING);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertThat(shop.reservationState(unpublished)).isEqualTo(ReservationState.CONFIRMED));
        // 10 units: one written, one still held by the live instance's write, the killed write's back.
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 8, 1));
        assertThat(redis.opsForZSet().score("instances", killed.instance()))
                .as("forgotten once settled")
                .isNull();
        assertThat(redis.opsForZSet().score("instances", alive.instance())).isNotNull();
    }

    /**
     * A sale the lease check cannot settle (here an unreadable record; a row lock held open alike) holds back no
     * other sale's, and the lapsed instance is forgotten all the same: its records there wait out the grace.
     */
    @Test
    void a_sale_that_cannot_be_settled_holds_back_no_other() throws Exception {
        InstanceLeases killed = new InstanceLeases(redis);
        InstanceLeases alive = new InstanceLeases(redis);
        long broken = shop.openSale(10, 1);
        String unreadable = OrderIds.next().toString();
        redis.opsForHash().put("{sale:" + broken + "}:orders", unreadable, "unreadable");
        redis.opsForZSet().add("{sale:" + broken + "}:pending", unreadable, 0);
        long saleId = shop.openSale(10, 1);
        OrderRequested writing = reservedBy(killed, saleId, "killed-sync", PurchasePath.SYNC);
        killed.beat();
        try {
            beats.scheduleAtFixedRate(alive::beat, 0, 200, TimeUnit.MILLISECONDS);

            await().atMost(Duration.ofSeconds(5))
                    .untilAsserted(
                            () -> assertThat(shop.reservationState(writing)).isEqualTo(ReservationState.RELEASED));
            await().atMost(Duration.ofSeconds(2))
                    .untilAsserted(() -> assertThat(redis.opsForZSet().score("instances", killed.instance()))
                            .isNull());
        } finally {
            redis.opsForZSet().remove("{sale:" + broken + "}:pending", unreadable);
            redis.opsForHash().delete("{sale:" + broken + "}:orders", unreadable);
        }
    }
}
