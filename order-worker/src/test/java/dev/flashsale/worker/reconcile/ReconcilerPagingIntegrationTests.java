package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * Many reservations that must wait ahead of one that is due, read in pages of five: the reconciler reads on
 * until it has seen every reservation past the shortest bound.
 */
@Tag("redis-cluster")
@TestPropertySource(
        properties = {"app.reconciler.grace=1s", "app.reconciler.handoff-timeout=1h", "app.reconciler.batch-size=5"})
class ReconcilerPagingIntegrationTests extends WorkerIntegrationTest {

    @Autowired
    Reconciler reconciler;

    @Test
    void releases_a_due_sync_reservation_behind_more_waiting_async_ones_than_ten_pages_hold() throws Exception {
        int waiting = 60;
        long saleId = shop.openSale(waiting + 1, 1);
        for (int i = 0; i < waiting; i++) {
            // Published, as far as the reconciler knows: their messages wait in a backlog.
            OrderRequested queued = shop.reserve(saleId, "queued-" + i, Instant.now(), PurchasePath.ASYNC);
            ledger.advance(saleId, queued.orderId(), EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED);
        }
        OrderRequested abandoned = shop.reserve(saleId, "gone", Instant.now(), PurchasePath.SYNC);
        Thread.sleep(1200); // every one past the SYNC grace, none past the hand-off timeout

        Pass pass = reconciler.reconcile(saleId);

        assertThat(pass).isEqualTo(new Pass(0, 1, 0));
        assertThat(shop.reservationState(abandoned)).isEqualTo(ReservationState.RELEASED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(waiting + 1, 1, waiting));
    }

    /** A publication dates its record anew, out of the pass's due range: the next page must not skip any. */
    @Test
    void publishes_every_reservation_left_unpublished_across_pages_in_one_pass() throws Exception {
        int unpublished = 12;
        long saleId = shop.openSale(unpublished, 1);
        for (int i = 0; i < unpublished; i++) {
            shop.reserve(saleId, "unpublished-" + i, Instant.now(), PurchasePath.ASYNC);
        }
        Thread.sleep(1200); // past the grace

        assertThat(reconciler.reconcile(saleId)).isEqualTo(new Pass(0, 0, 0, unpublished));
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(shop.ordersByStatus(saleId))
                        .isEqualTo(Map.of(OrderStatus.CONFIRMED, (long) unpublished)));
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(unpublished, 0, 0));
    }
}
