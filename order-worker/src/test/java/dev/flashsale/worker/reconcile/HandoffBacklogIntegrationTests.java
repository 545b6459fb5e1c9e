package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.FailingWrites;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.test.context.TestPropertySource;

/**
 * Accepted orders whose messages the broker still holds, older than the hand-off timeout: they wait for
 * their message however long it takes, and each ends CONFIRMED. Only a reservation never published may time
 * out.
 */
@TestPropertySource(
        properties = {
            "app.reconciler.grace=1s",
            "app.reconciler.handoff-timeout=2s",
            "app.reconciler.queues-quiet=0s",
            "app.messaging.retry-delay=3s"
        })
@Import(FailingWrites.Store.class)
class HandoffBacklogIntegrationTests extends WorkerIntegrationTest {

    private static final Duration PAST_HANDOFF_TIMEOUT = Duration.ofMillis(2200);

    @Autowired
    Reconciler reconciler;

    @Autowired
    RabbitListenerEndpointRegistry listeners;

    @Autowired
    FailingWrites store;

    @AfterEach
    void workersRunAndWrite() {
        listeners.getListenerContainer("order-drain").start();
        store.heal();
    }

    /**
     * The workers consume again: the order of its sale of ten units ends CONFIRMED in Postgres and in Redis,
     * and no reconciler pass meanwhile closes it FAILED.
     */
    private void writtenOnceTheWorkersConsume(OrderRequested order) {
        long saleId = order.saleId();
        listeners.getListenerContainer("order-drain").start();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(reconciler.reconcile(saleId).failed()).isZero();
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, 1L));
            assertThat(shop.reservationState(order)).isEqualTo(ReservationState.CONFIRMED);
        });

        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
    }

    @Test
    void orders_queued_while_the_workers_are_stopped_past_the_handoff_timeout_all_end_confirmed() throws Exception {
        int orders = 20;
        long saleId = shop.openSale(orders, 1);
        listeners.getListenerContainer("order-drain").stop();
        List<OrderRequested> accepted = new ArrayList<>();
        for (int i = 0; i < orders; i++) {
            accepted.add(shop.order(saleId, "backlogged-" + i));
        }
        Thread.sleep(PAST_HANDOFF_TIMEOUT.toMillis());

        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
        listeners.getListenerContainer("order-drain").start();
        // Reconcile all along the drain: an order a worker is writing is no more due than a queued one.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(reconciler.reconcile(saleId).failed()).isZero();
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, (long) orders));
            // Redis's hold ends after Postgres's commit, so it is awaited too.
            assertThat(accepted)
                    .allSatisfy(
                            order -> assertThat(shop.reservationState(order)).isEqualTo(ReservationState.CONFIRMED));
        });

        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(orders, 0, 0));
        assertThat(shop.postgresStock(saleId)).isZero();
    }

    @Test
    void an_order_waiting_in_the_retry_queue_past_the_handoff_timeout_ends_confirmed() throws Exception {
        long saleId = shop.openSale(10, 1);
        TransientDataAccessResourceException blip = new TransientDataAccessResourceException("Postgres blip");
        // The batch write and the write on its own both fail once: the order goes to the retry queue.
        store.failNext(2, blip);
        OrderRequested retried = shop.order(saleId, "retried");
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(store.failedWrites()).isEqualTo(2));
        Thread.sleep(PAST_HANDOFF_TIMEOUT.toMillis()); // its copy waits out the retry delay (3 s)

        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, 1L));
            assertThat(shop.reservationState(retried)).isEqualTo(ReservationState.CONFIRMED);
        });

        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(9);
    }

    /**
     * Issue 38, path 8: the broker confirmed the message, but the API's PUBLISHED mark failed (three tries,
     * or a failover lost it), and the shopper was told 202. The record stays RESERVED past the hand-off
     * timeout while its message waits in the queue: the reconciler publishes a copy (it cannot tell this from
     * an API that died unpublished), and the order is written once, not closed FAILED (before: FAILED at the
     * hand-off timeout, whatever the queue held). Dated anew by that publication, it is not read again as
     * past the hand-off timeout while the copies wait.
     */
    @Test
    void an_order_left_reserved_after_its_confirm_is_written_from_its_message_not_closed_failed() throws Exception {
        long saleId = shop.openSale(10, 1);
        listeners.getListenerContainer("order-drain").stop();
        OrderRequested unmarked = shop.reserve(saleId, "unmarked", Instant.now());
        shop.publish(unmarked);
        Thread.sleep(PAST_HANDOFF_TIMEOUT.toMillis());

        assertThat(reconciler.reconcile(saleId)).isEqualTo(new Pass(0, 0, 0, 1));
        assertThat(shop.reservationState(unmarked)).isEqualTo(ReservationState.PUBLISHED);
        assertThat(reconciler.reconcile(saleId))
                .as("its messages wait in the queue")
                .isEqualTo(Pass.NOTHING);
        writtenOnceTheWorkersConsume(unmarked);
    }

    /**
     * The worker holding the order died: its message went back to the queue, its record stays CLAIMED with a
     * claim older than the hand-off timeout. The next worker to consume claims it again; until one has
     * consumed for a hand-off timeout, the reconciler leaves the claim alone (before: closed FAILED at once).
     */
    @Test
    void an_order_claimed_by_a_worker_that_died_is_written_by_the_next_not_closed_failed() throws Exception {
        long saleId = shop.openSale(10, 1);
        listeners.getListenerContainer("order-drain").stop();
        OrderRequested held = shop.order(saleId, "held-by-the-dead");
        // What the dead worker left: the record CLAIMED, the message back in the queue.
        assertThat(ledger.advance(
                                saleId,
                                held.orderId(),
                                EnumSet.of(ReservationState.PUBLISHED),
                                ReservationState.CLAIMED)
                        .changed())
                .isTrue();
        Thread.sleep(PAST_HANDOFF_TIMEOUT.toMillis());

        assertThat(reconciler.reconcile(saleId))
                .as("no worker consumes: the message may be claimed again")
                .isEqualTo(Pass.NOTHING);
        writtenOnceTheWorkersConsume(held);
    }
}
