package dev.flashsale.worker.reconcile;

import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.PendingReservations.Pending;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.worker.FailedOrders;
import dev.flashsale.worker.FailedOrders.Closed;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Settles one pending reservation past its bound from Postgres's truth: an order Postgres has (CONFIRMED,
 * REJECTED, FAILED) is followed by Redis, whatever state its record is in (a PUBLISHED one too: a worker
 * whose claim Redis refused recorded it FAILED and dead-lettered it); an order it does not have is published
 * for a worker ({@link UnpublishedOrders}) or closed as {@link Settlement} says, so that nothing can write a
 * closed one later. Every step is a compare-and-set script or an
 * idempotent insert, so several workers may settle the same reservation at once.
 */
@Component
class Settler {

    /** The code on a SYNC reservation given back because its request never finished. */
    static final String ABANDONED = "ABANDONED";

    /** The code on an ASYNC order no worker wrote within the hand-off bound. */
    static final String HANDOFF_EXPIRED = "HANDOFF_EXPIRED";

    private final StockLedger ledger;
    private final OrderLookup orders;
    private final OrderStore store;
    private final TransactionTemplate transactions;
    private final SettlementRules rules;
    private final FailedOrders failures;
    private final PublishedWaits published;
    private final UnpublishedOrders unpublished;

    Settler(
            StockLedger ledger,
            OrderLookup orders,
            OrderStore store,
            TransactionTemplate transactions,
            ReconcilerProperties properties,
            SettlementRules rules,
            UnpublishedOrders unpublished) {
        this.ledger = ledger;
        this.orders = orders;
        this.store = store;
        this.transactions = transactions;
        this.rules = rules;
        this.unpublished = unpublished;
        this.failures = new FailedOrders(store, ledger, transactions);
        this.published = new PublishedWaits(properties.publishedRecheck());
    }

    /** A pass begins: PUBLISHED reservations due for a re-read (about {@code published-recheck} on) are read again. */
    void passBegins() {
        published.forgetStale();
        unpublished.passBegins();
    }

    /** Settles {@code pending} if it is past its bound; {@code lapsed}: API instances whose requests died with them. */
    Pass settle(long saleId, Pending pending, Set<String> lapsed) {
        if (published.stillWaiting(pending)) {
            return Pass.NOTHING;
        }
        Optional<Reservation> found = ledger.find(saleId, pending.orderId());
        if (found.isEmpty()) {
            // Expired: the release script finds nothing to give back and drops it from the pending set.
            ledger.release(saleId, pending.orderId(), ReservationState.PENDING, ReservationState.RELEASED, ABANDONED);
            return Pass.NOTHING;
        }
        Reservation reservation = found.get();
        if (reservation.state() == ReservationState.PUBLISHED) {
            published.waiting(pending); // its message is queued: read again once claimed, or after the recheck
        }
        Settlement settlement = rules.of(reservation, pending, lapsed);
        if (settlement == Settlement.WAIT) {
            return Pass.NOTHING;
        }
        Optional<StoredOrder> stored = orders.find(reservation.orderId());
        if (stored.isPresent()) {
            return followPostgres(stored.get());
        }
        return switch (settlement) {
            case PUBLISH -> {
                OrderRequested order = orderOf(reservation);
                if (unpublished.mayPublish(order)) {
                    yield unpublished.publish(order) ? new Pass(0, 0, 0, 1) : Pass.NOTHING;
                }
                yield rules.unpublished(pending) == Settlement.FAIL ? fail(saleId, pending, reservation) : Pass.NOTHING;
            }
            case RELEASE -> release(reservation, ReservationState.RESERVED);
            case PROBE_THEN_RELEASE -> {
                OrderRequested order = orderOf(reservation);
                Optional<StoredOrder> written = Optional.ofNullable(transactions.execute(status -> {
                    status.setRollbackOnly();
                    return store.findSettled(List.of(order)).get(order.orderId());
                }));
                yield written.isPresent()
                        ? followPostgres(written.get())
                        : release(reservation, ReservationState.WRITING);
            }
            case FAIL -> fail(saleId, pending, reservation);
            case WAIT, FOLLOW -> Pass.NOTHING;
        };
    }

    /**
     * Closes the order FAILED ({@link Settlement#FAIL}), unless its record was claimed or published since its
     * age was read.
     */
    private Pass fail(long saleId, Pending pending, Reservation reservation) {
        if (!rules.stillAsRead(saleId, pending)) {
            return Pass.NOTHING;
        }
        return switch (failures.close(orderOf(reservation), HANDOFF_EXPIRED)) {
            case Closed.Settled settled -> settled.moved() ? counted(settled.order()) : Pass.NOTHING;
            case Closed.Unsettled unsettled -> throw unsettled.cause();
        };
    }

    private Pass followPostgres(StoredOrder order) {
        if (!ledger.settle(order.saleId(), order.orderId(), order.status(), order.failureCode())) {
            return Pass.NOTHING; // someone else settled it meanwhile
        }
        return counted(order);
    }

    /** A reservation this pass moved to follow {@code order}. */
    private static Pass counted(StoredOrder order) {
        return switch (order.status()) {
            case FAILED -> HANDOFF_EXPIRED.equals(order.failureCode()) ? new Pass(0, 0, 1) : new Pass(1, 0, 0);
            case QUEUED, CONFIRMED, REJECTED -> new Pass(1, 0, 0);
        };
    }

    private Pass release(Reservation reservation, ReservationState from) {
        return ledger.release(
                                reservation.saleId(),
                                reservation.orderId(),
                                EnumSet.of(from),
                                ReservationState.RELEASED,
                                ABANDONED)
                        .changed()
                ? new Pass(0, 1, 0)
                : Pass.NOTHING;
    }

    /** The order as its reservation knows it; the Idempotency-Key stays with the API, Postgres needs the id. */
    private static OrderRequested orderOf(Reservation reservation) {
        return new OrderRequested(
                reservation.orderId(),
                reservation.saleId(),
                reservation.userId(),
                reservation.quantity(),
                reservation.createdAt(),
                null,
                null);
    }
}
