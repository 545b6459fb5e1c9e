package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Instant;
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
            shop.reserve(saleId, "queued-" + i, Instant.now(), PurchasePath.ASYNC);
        }
        OrderRequested abandoned = shop.reserve(saleId, "gone", Instant.now(), PurchasePath.SYNC);
        Thread.sleep(1200); // every one past the SYNC grace, none past the hand-off timeout

        Pass pass = reconciler.reconcile(saleId);

        assertThat(pass).isEqualTo(new Pass(0, 1, 0));
        assertThat(shop.reservationState(abandoned)).isEqualTo(ReservationState.RELEASED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(waiting + 1, 1, waiting));
    }
}
