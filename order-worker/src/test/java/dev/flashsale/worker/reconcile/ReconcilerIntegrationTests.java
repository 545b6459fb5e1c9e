package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.PendingReservations;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Reservations nobody finished, one test per pending state. Each test reconciles its own sale (the scheduled
 * pass would reconcile every sale in the shared database). Ages are Redis's clock, so the tests wait out
 * short bounds instead of back-dating. A message in flight is a retry copy held in the retry queue (its TTL
 * is an hour here); the queues count as quiet as soon as they are read empty.
 */
@TestPropertySource(
        properties = {
            "app.reconciler.grace=1s",
            "app.reconciler.handoff-timeout=2s",
            "app.reconciler.queues-quiet=0s",
            "app.messaging.retry-delay=1h"
        })
class ReconcilerIntegrationTests extends WorkerIntegrationTest {

    private static final Duration PAST_ALL_BOUNDS = Duration.ofMillis(2200);

    @Autowired
    Reconciler reconciler;

    @Autowired
    OrderStore store;

    @Autowired
    PendingReservations pending;

    @Autowired
    TransactionTemplate transactions;

    @AfterEach
    void noMessageInFlight() {
        shop.dropRetryCopies();
    }

    private static void pastAllBounds() throws InterruptedException {
        Thread.sleep(PAST_ALL_BOUNDS);
    }

    /** An order of a sale of its own (10 units), its message confirmed by the broker, past every bound. */
    private OrderRequested publishedPastAllBounds(String user) throws InterruptedException {
        OrderRequested order = reservedThrough(user, PurchasePath.ASYNC, ReservationState.PUBLISHED);
        pastAllBounds();
        return order;
    }

    /** An order of a sale of its own (10 units) on the given path, its record taken through {@code states}. */
    private OrderRequested reservedThrough(String user, PurchasePath mode, ReservationState... states) {
        OrderRequested order = shop.reserve(shop.openSale(10, 1), user, Instant.now(), mode);
        for (ReservationState state : states) {
            advance(order, state);
        }
        return order;
    }

    /** A message of another sale's order held in the retry queue: the queues are not quiet. */
    private void messageOfAnotherSaleInFlight(String user) {
        shop.holdRetryCopy(shop.reserve(shop.openSale(10, 1), user, Instant.now()));
    }

    private Pass reconciledPastAllBounds(long saleId) throws InterruptedException {
        pastAllBounds();
        return reconciler.reconcile(saleId);
    }

    private void advance(OrderRequested order, ReservationState to) {
        assertThat(ledger.advance(order.saleId(), order.orderId(), ReservationState.PENDING, to)
                        .changed())
                .isTrue();
    }

    private void write(OrderRequested order, PurchasePath mode) {
        transactions.executeWithoutResult(status -> store.place(order, mode));
    }

    @Test
    void releases_a_sync_reservation_never_taken_to_writing() throws Exception {
        long saleId = shop.openSale(10, 1);
        OrderRequested abandoned = shop.reserve(saleId, "gone", Instant.now(), PurchasePath.SYNC);
        pastAllBounds();
        OrderRequested fresh = shop.reserve(saleId, "still-writing", Instant.now(), PurchasePath.SYNC);

        Pass pass = reconciler.reconcile(saleId);

        assertThat(pass).isEqualTo(new Pass(0, 1, 0));
        Reservation released = ledger.find(saleId, abandoned.orderId()).orElseThrow();
        assertThat(released.state()).isEqualTo(ReservationState.RELEASED);
        assertThat(released.code()).isEqualTo(Settler.ABANDONED);
        assertThat(shop.redisUnits(saleId, "gone")).isZero();
        assertThat(shop.reservationState(fresh)).isEqualTo(ReservationState.RESERVED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 1));
        assertThat(lookup.find(abandoned.orderId())).isEmpty();
    }

    /**
     * Issue 37: an API instance died between its reserve and its publish (a kill mid-crowd). Past the grace
     * the reconciler publishes the order and a worker writes it (before: its unit held for the hand-off
     * timeout, 5 min in production, then closed FAILED).
     */
    @Test
    void publishes_an_async_reservation_its_api_left_unpublished_and_a_worker_writes_it() throws Exception {
        long saleId = shop.openSale(10, 1);
        OrderRequested unpublished = shop.reserve(saleId, "crashed-api", Instant.now(), PurchasePath.ASYNC);
        assertThat(reconciler.reconcile(saleId)).as("within the grace").isEqualTo(Pass.NOTHING);
        Thread.sleep(1200); // past the grace, not past the hand-off timeout

        assertThat(reconciler.reconcile(saleId)).isEqualTo(new Pass(0, 0, 0, 1));

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(lookup.find(unpublished.orderId()).map(StoredOrder::status))
                    .contains(OrderStatus.CONFIRMED);
            assertThat(shop.reservationState(unpublished)).isEqualTo(ReservationState.CONFIRMED);
        });
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(9);
        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
    }

    /**
     * A fresh Idempotency-Key whose binding Redis lost: the API found the key's order in Postgres, answered it,
     * and could not give the fresh reservation back. Published, it would be a second order of one key: it is
     * closed FAILED after the hand-off timeout instead, as every unpublished one was before.
     */
    @Test
    void closes_a_reservation_whose_shopper_holds_another_order_of_the_sale_as_failed_after_the_handoff_timeout()
            throws Exception {
        long saleId = shop.openSale(10, 2);
        OrderRequested original = shop.reserve(saleId, "replayed", Instant.now(), PurchasePath.ASYNC);
        advance(original, ReservationState.CLAIMED);
        write(original, PurchasePath.ASYNC);
        assertThat(ledger.settle(saleId, original.orderId(), OrderStatus.CONFIRMED, ""))
                .isTrue();
        OrderRequested fresh = shop.reserve(saleId, "replayed", Instant.now(), PurchasePath.ASYNC);
        Thread.sleep(1200); // past the grace, not past the hand-off timeout

        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
        assertThat(shop.reservationState(fresh)).isEqualTo(ReservationState.RESERVED);
        Thread.sleep(1000);
        Pass pass = reconciler.reconcile(saleId);

        assertThat(pass).isEqualTo(new Pass(0, 0, 1));
        assertThat(lookup.find(fresh.orderId()).map(StoredOrder::failureCode)).contains(Settler.HANDOFF_EXPIRED);
        assertThat(shop.reservationState(fresh)).isEqualTo(ReservationState.FAILED);
        assertThat(shop.redisUnits(saleId, "replayed"))
                .as("the original's unit")
                .isEqualTo(1);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(9);
    }

    @Test
    void waits_for_a_published_order_however_old_while_a_message_may_still_write_it() throws Exception {
        messageOfAnotherSaleInFlight("ahead-in-the-queues");
        OrderRequested published = publishedPastAllBounds("backlogged");
        long saleId = published.saleId();

        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
        assertThat(shop.reservationState(published)).isEqualTo(ReservationState.PUBLISHED);
        assertThat(lookup.find(published.orderId())).isEmpty();
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 1));
    }

    /**
     * A backlog costs the sale's shard nothing per pass: a waiting PUBLISHED record is read once, then left
     * alone (Redis's idle time of the record grows) until its score moves or the recheck is due.
     */
    @Test
    void reads_a_waiting_published_order_once_not_every_pass() throws Exception {
        messageOfAnotherSaleInFlight("ahead-in-the-queues");
        OrderRequested published = publishedPastAllBounds("queued-deep");
        long saleId = published.saleId();
        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);

        Thread.sleep(2200);
        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);

        assertThat(shop.redisIdle(published)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(shop.reservationState(published)).isEqualTo(ReservationState.PUBLISHED);
    }

    /** Its message was dead-lettered after a worker claimed it; a copy that turns up later writes nothing. */
    @Test
    void closes_a_claimed_order_past_the_handoff_timeout_from_its_latest_claim() throws Exception {
        messageOfAnotherSaleInFlight("ahead-in-the-queues");
        OrderRequested claimed = publishedPastAllBounds("dead-lettered");
        long saleId = claimed.saleId();
        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING); // read while it waits in the queue
        advance(claimed, ReservationState.CLAIMED); // a worker takes it only now: its score moves
        shop.dropRetryCopies();

        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
        pastAllBounds();
        Pass pass = reconciler.reconcile(saleId);
        shop.publish(claimed); // a copy arrives after all

        assertThat(pass).isEqualTo(new Pass(0, 0, 1));
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertClosedAsFailed(claimed);
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.FAILED, 1L));
        });
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 10, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(10);
    }

    /**
     * Issue 38, path 4: a worker's claim was refused by Redis (out of memory, or out of reach) for the whole
     * retry budget; it recorded the order FAILED in Postgres and dead-lettered it, and the record stayed
     * PUBLISHED. Postgres has the order, so Redis follows, whatever the queues hold (before: it waited for
     * good, QUEUED to its shopper, the unit held).
     */
    @Test
    void settles_a_published_order_to_the_failed_order_postgres_holds() throws Exception {
        OrderRequested refused = reservedThrough("claim-refused", PurchasePath.ASYNC, ReservationState.PUBLISHED);
        long saleId = refused.saleId();
        transactions.executeWithoutResult(status -> store.recordFailure(refused, "RETRIES_EXHAUSTED"));
        messageOfAnotherSaleInFlight("busy-elsewhere");

        Pass pass = reconciledPastAllBounds(saleId);

        assertThat(pass).isEqualTo(new Pass(1, 0, 0));
        Reservation settled = ledger.find(saleId, refused.orderId()).orElseThrow();
        assertThat(settled.state()).isEqualTo(ReservationState.FAILED);
        assertThat(settled.code()).isEqualTo("RETRIES_EXHAUSTED");
        assertThat(shop.redisUnits(saleId, "claim-refused")).isZero();
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 10, 0));
    }

    /**
     * Issue 38, path 4: as above, but Postgres could not record it either; its message was dead-lettered, no
     * queue holds it, so nothing can write it any more (before: PUBLISHED, its unit held, for good).
     */
    @Test
    void closes_a_published_order_whose_message_no_queue_holds_as_failed() throws Exception {
        OrderRequested stranded = publishedPastAllBounds("dead-lettered-unrecorded");

        Pass pass = reconciler.reconcile(stranded.saleId());

        assertThat(pass).isEqualTo(new Pass(0, 0, 1));
        assertClosedAsFailed(stranded);
        assertThat(shop.redisCounters(stranded.saleId())).isEqualTo(new SaleCounters(10, 10, 0));
    }

    /**
     * Issue 38, path 8: a worker sent the order to the retry queue and its CLAIMED to PUBLISHED mark failed;
     * the copy waits out the retry delay. The claim is past the hand-off timeout, but the copy will write it
     * (before: closed FAILED, after a 202).
     */
    @Test
    void leaves_a_claimed_order_whose_retry_copy_waits_to_its_copy() throws Exception {
        OrderRequested retried =
                reservedThrough("retried", PurchasePath.ASYNC, ReservationState.PUBLISHED, ReservationState.CLAIMED);
        shop.holdRetryCopy(retried);

        assertThat(reconciledPastAllBounds(retried.saleId())).isEqualTo(Pass.NOTHING);
        assertThat(shop.reservationState(retried)).isEqualTo(ReservationState.CLAIMED);
        assertThat(lookup.find(retried.orderId())).isEmpty();
    }

    /** Defect 2: a worker claimed the order, then Postgres stayed down past the retry budget. */
    @Test
    void closes_a_claimed_order_postgres_never_got_as_failed_and_gives_its_units_back() throws Exception {
        OrderRequested stranded =
                reservedThrough("stranded", PurchasePath.ASYNC, ReservationState.PUBLISHED, ReservationState.CLAIMED);
        long saleId = stranded.saleId();

        Pass pass = reconciledPastAllBounds(saleId);

        assertThat(pass).isEqualTo(new Pass(0, 0, 1));
        assertClosedAsFailed(stranded);
        assertThat(shop.redisUnits(saleId, "stranded")).isZero();
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 10, 0));
    }

    @Test
    void settles_a_claimed_order_to_the_confirmed_order_postgres_holds() throws Exception {
        OrderRequested written = reservedThrough("written", PurchasePath.ASYNC, ReservationState.CLAIMED);
        long saleId = written.saleId();
        write(written, PurchasePath.ASYNC);

        Pass pass = reconciledPastAllBounds(saleId);

        assertThat(pass).isEqualTo(new Pass(1, 0, 0));
        assertThat(shop.reservationState(written)).isEqualTo(ReservationState.CONFIRMED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
        assertThat(shop.redisUnits(saleId, "written")).isEqualTo(1);
        assertThat(shop.postgresStock(saleId)).isEqualTo(9);
    }

    @Test
    void settles_a_reserved_order_to_the_rejection_postgres_holds() throws Exception {
        OrderRequested rejected = reservedThrough("too-late", PurchasePath.SYNC);
        long saleId = rejected.saleId();
        shop.setPostgresStock(saleId, 0); // Redis took the unit, Postgres has none left
        write(rejected, PurchasePath.SYNC);

        Pass pass = reconciledPastAllBounds(saleId);

        assertThat(pass).isEqualTo(new Pass(1, 0, 0));
        assertThat(shop.reservationState(rejected)).isEqualTo(ReservationState.REJECTED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 10, 0));
        assertThat(shop.redisUnits(saleId, "too-late")).isZero();
    }

    @Test
    void releases_a_sync_write_nobody_finished_and_follows_one_that_committed() throws Exception {
        long saleId = shop.openSale(10, 1);
        OrderRequested lost = shop.reserve(saleId, "lost", Instant.now(), PurchasePath.SYNC);
        advance(lost, ReservationState.WRITING);
        OrderRequested committed = shop.reserve(saleId, "committed", Instant.now(), PurchasePath.SYNC);
        advance(committed, ReservationState.WRITING);
        write(committed, PurchasePath.SYNC);

        Pass pass = reconciledPastAllBounds(saleId);

        assertThat(pass).isEqualTo(new Pass(1, 1, 0));
        assertThat(shop.reservationState(lost)).isEqualTo(ReservationState.RELEASED);
        assertThat(lookup.find(lost.orderId())).as("the probe leaves no row").isEmpty();
        assertThat(shop.reservationState(committed)).isEqualTo(ReservationState.CONFIRMED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(9);
    }

    @Test
    void several_reconcilers_at_once_settle_each_reservation_exactly_once() throws Exception {
        int orders = 60;
        long saleId = shop.openSale(orders, 1);
        List<OrderRequested> held = new ArrayList<>();
        long claimedUnwritten = 0;
        long reservedUnwritten = 0;
        for (int i = 0; i < orders; i++) {
            PurchasePath mode = i % 2 == 0 ? PurchasePath.SYNC : PurchasePath.ASYNC;
            OrderRequested order = shop.reserve(saleId, "user-" + i, Instant.now(), mode);
            if (i % 3 == 0) {
                advance(order, mode == PurchasePath.SYNC ? ReservationState.WRITING : ReservationState.CLAIMED);
            }
            if (i % 5 == 0) {
                write(order, mode);
            } else if (mode == PurchasePath.ASYNC && i % 3 == 0) {
                claimedUnwritten++;
            } else if (mode == PurchasePath.ASYNC) {
                reservedUnwritten++;
            }
            held.add(order);
        }
        pastAllBounds();

        List<Pass> passes = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<Pass>> running = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                running.add(pool.submit(() -> reconciler.reconcile(saleId)));
            }
            for (Future<Pass> one : running) {
                passes.add(one.get());
            }
        }

        Pass total = passes.stream().reduce(Pass.NOTHING, Pass::plus);
        // SYNC ones unwritten are released, ASYNC ones claimed and unwritten closed FAILED, ASYNC ones still
        // RESERVED and unwritten published and written by the workers; each once, whichever pass got there.
        long written = orders / 5;
        assertThat(total.settled()).isEqualTo(written);
        assertThat(total.released()).isEqualTo(orders / 2 - orders / 10);
        assertThat(total.failed()).isEqualTo(claimedUnwritten);
        assertThat(total.published()).isBetween((int) reservedUnwritten, 4 * (int) reservedUnwritten);
        long sold = written + reservedUnwritten;
        long closed = claimedUnwritten;
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertThat(pending.olderThan(saleId, Duration.ZERO, 0, orders)).isEmpty();
            assertThat(shop.ordersByStatus(saleId))
                    .isEqualTo(Map.of(OrderStatus.CONFIRMED, sold, OrderStatus.FAILED, closed));
        });
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(orders, orders - sold, 0));
        assertThat(shop.postgresStock(saleId)).isEqualTo(orders - sold);
        assertThat(reconciler.reconcile(saleId)).isEqualTo(Pass.NOTHING);
        assertThat(EnumSet.copyOf(held.stream().map(shop::reservationState).toList()))
                .isEqualTo(EnumSet.of(ReservationState.CONFIRMED, ReservationState.RELEASED, ReservationState.FAILED));
    }

    private void assertClosedAsFailed(OrderRequested order) {
        StoredOrder stored = lookup.find(order.orderId()).orElseThrow();
        assertThat(stored.status()).isEqualTo(OrderStatus.FAILED);
        assertThat(stored.failureCode()).isEqualTo(Settler.HANDOFF_EXPIRED);
        Reservation reservation = ledger.find(order.saleId(), order.orderId()).orElseThrow();
        assertThat(reservation.state()).isEqualTo(ReservationState.FAILED);
        assertThat(shop.redisUnits(order.saleId(), order.userId())).isZero();
    }
}
