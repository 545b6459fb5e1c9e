package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The SYNC path: an order waits for the group commit ({@link SyncCommits}) that reserves it in Redis and writes
 * it with the others that arrived meanwhile, and answers 201 only after the commit that holds it. SYNC requests in
 * flight are capped by a bulkhead that never waits, and the path limit refuses new ones while the commit queue
 * is late or the database breaker is open. A request thus waits for its batch's write at most its
 * queueing and the batch's bounded write.
 */
@Component
class SyncPurchase implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(SyncPurchase.class);
    static final String BULKHEAD = "sync-db";

    private final StockLedger ledger;
    private final Bulkhead bulkhead;
    private final AutoPilot autoPilot;
    private final SyncCommits writer;
    private final GroupCommit<BatchReserves.Order, Written> commits;

    SyncPurchase(
            SyncCommits writer,
            StockLedger ledger,
            BulkheadRegistry bulkheads,
            AutoPilot autoPilot,
            PurchaseProperties properties,
            MeterRegistry meters) {
        this.writer = writer;
        this.ledger = ledger;
        this.bulkhead = bulkheads.bulkhead(BULKHEAD);
        this.autoPilot = autoPilot;
        this.commits = new GroupCommit<>("sync", properties.sync(), writer::write, meters);
    }

    /** Whether the sync path would take a purchase at once: breaker not open, a permit free, queue on time. */
    boolean hasCapacity() {
        return !writer.breakerOpen() && bulkhead.getMetrics().getAvailableConcurrentCalls() > 0 && commits.admits();
    }

    /**
     * Reserves and writes the order with the others that arrive meanwhile: {@link Written.Confirmed},
     * {@link NotTaken.NotReserved} with what Redis decided instead, or {@link NotTaken.ReserveFailed}. Without a
     * bulkhead permit nothing is reserved; when the database fails, the reservation is released; both answer
     * 503. {@code admit}: its reserve call counts the attempt and binds its key ({@link BatchReserves.Order}).
     */
    Written take(OrderRequested order, boolean admit, ApiProblem unavailable) {
        if (!bulkhead.tryAcquirePermission()) {
            throw unavailable;
        }
        long started = System.nanoTime();
        // The linger is left out of the path's measure: under traffic either path lingers alike, while an
        // idle probe or a rehearsal of the other path goes alone and does not (AUTO compares like for like).
        AtomicLong lingered = new AtomicLong();
        Written written;
        try {
            written = commits.submit(new BatchReserves.Order(order, admit), lingered::set);
        } catch (RuntimeException e) { // overdue, or shutting down: its batch may or may not have begun writing it
            written = abandon(order, e instanceof Overdue overdue && overdue.roundBegun());
        } finally {
            bulkhead.onComplete();
        }
        if (written instanceof Written.Confirmed || written instanceof Written.Refused) {
            // Only a write that ran is a measure of the path: a failure (an open breaker fails at once)
            // would read as a fast SYNC. Failures reach AUTO through the breaker's failure rate.
            autoPilot.syncTook(System.nanoTime() - started - lingered.get());
        }
        return switch (written) {
            case Written.Confirmed confirmed -> confirmed;
            case NotTaken.NotReserved notReserved -> notReserved;
            case Written.Failed failed -> throw release(order, unavailable);
            case NotTaken.ReserveFailed failed -> failed;
            case Written.Unknown unknown -> throw new OutcomeUnknown();
            case Written.Refused refused -> {
                settleRejected(order, refused.code());
                if (OrderStore.IDEMPOTENCY_KEY_REUSED.equals(refused.code())) {
                    // The key's Redis binding expired, but Postgres still holds an older order under it.
                    throw IdempotencyKeys.reused();
                }
                throw ApiProblem.refused(rejection(refused.code()));
            }
        };
    }

    /**
     * An order whose request stopped waiting for its batch: nothing is reserved unless its batch began, which
     * reserves it WRITING; then its commit may still land, so the reconciler decides from Postgres. A batch
     * that took it ({@code roundBegun}) may not have reserved it yet: a missing record is no answer then.
     */
    private Written abandon(OrderRequested order, boolean roundBegun) {
        try {
            Transition released = ledger.release(
                    order.saleId(),
                    order.orderId(),
                    EnumSet.of(ReservationState.RESERVED),
                    ReservationState.RELEASED,
                    "UNAVAILABLE");
            return released.state() == ReservationState.WRITING || (released.missing() && roundBegun)
                    ? new Written.Unknown()
                    : new Written.Failed();
        } catch (RuntimeException e) {
            return new Written.Unknown();
        }
    }

    /** The commit of the order's write has an outcome nobody knows yet; its Idempotency-Key must stay bound. */
    static final class OutcomeUnknown extends RuntimeException {
        OutcomeUnknown() {
            super("commit outcome unknown", null, false, false);
        }
    }

    /** A SYNC order Postgres rejected: past the per-user quota (its own code), else sold out. */
    static ProblemCode rejection(@Nullable String code) {
        return OrderStore.LIMIT_REACHED.equals(code) ? ProblemCode.PURCHASE_LIMIT_REACHED : ProblemCode.SOLD_OUT;
    }

    /** Gives a rejected order's units back; if Redis is unreachable, the reconciler does it from Postgres. */
    private void settleRejected(OrderRequested order, String code) {
        try {
            ledger.settle(order.saleId(), order.orderId(), OrderStatus.REJECTED, code);
        } catch (RuntimeException e) {
            log.warn(
                    "order {} of sale {} rejected but its reservation not settled (the reconciler will): {}",
                    order.orderId(),
                    order.saleId(),
                    e.toString());
        }
    }

    private ApiProblem release(OrderRequested order, ApiProblem unavailable) {
        ledger.release(
                order.saleId(),
                order.orderId(),
                EnumSet.of(ReservationState.RESERVED, ReservationState.WRITING),
                ReservationState.RELEASED,
                "UNAVAILABLE");
        return unavailable;
    }

    @Override
    public void destroy() {
        commits.close();
    }
}
