package dev.flashsale.worker.drain;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.worker.FailedOrders;
import dev.flashsale.worker.FailedOrders.Closed;
import dev.flashsale.worker.PostgresTimeouts;
import dev.flashsale.worker.drain.DrainMetrics.Outcome;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bookkeeping of one drained batch: what each order came to (acked, retried, failed), and whether
 * Postgres or Redis has already proven unreachable in it. A message carries one order (contract v1) or
 * several (v2); its disposition is the most cautious of its orders' — requeue over dead-letter over ack —
 * so a message is acked only once every order in it is settled.
 */
final class DrainBatch {

    private static final Logger log = LoggerFactory.getLogger(DrainBatch.class);

    /** The retry budget ran out while Postgres or Redis kept failing. */
    static final String RETRIES_EXHAUSTED = "RETRIES_EXHAUSTED";

    /** The order cannot be written at all (a constraint or a bug): retrying would not help. */
    static final String WRITE_FAILED = "WRITE_FAILED";

    private final Map<Long, Disposition.Kind> byTag = new LinkedHashMap<>();
    private final StockLedger ledger;
    private final FailedOrders failures;
    private final DelayedRetry retries;
    private final DrainMetrics metrics;
    private final int maxAttempts;
    private @Nullable RuntimeException unreachable;
    private boolean markingFailed;
    private final Map<Long, RuntimeException> stalled = new HashMap<>();
    private final List<Failed> failed = new ArrayList<>();

    /** An order this batch gives up on: it is dead-lettered, and closed with the batch's other failures. */
    private record Failed(Delivery delivery, String code, RuntimeException cause) {}

    DrainBatch(StockLedger ledger, FailedOrders failures, DelayedRetry retries, DrainMetrics metrics, int maxAttempts) {
        this.ledger = ledger;
        this.failures = failures;
        this.retries = retries;
        this.metrics = metrics;
        this.maxAttempts = maxAttempts;
    }

    /**
     * Runs one step for a group of deliveries (one script call, one transaction); when it fails, each
     * delivery becomes a retry or a failure and the answer is null. Once a step of a sale ran into a
     * Postgres lock or statement timeout (a row lock held open), the sale's further steps in this batch go
     * to the retry queue without trying: each would wait out the same timeout, and hold the whole queue.
     */
    <T> @Nullable T attempt(List<Delivery> deliveries, Supplier<T> step) {
        RuntimeException known = unreachable != null ? unreachable : stalledOn(deliveries);
        if (known != null) {
            deliveries.forEach(delivery -> record(delivery.tag(), retryOrFail(delivery, known)));
            return null;
        }
        try {
            return step.get();
        } catch (RuntimeException e) {
            if (FailureKind.of(e) == FailureKind.UNREACHABLE) {
                unreachable = e;
            }
            if (PostgresTimeouts.isTimeout(e)) {
                metrics.postgresTimeout();
                deliveries.forEach(delivery -> stalled.put(delivery.order().saleId(), e));
            }
            deliveries.forEach(delivery -> record(delivery.tag(), retryOrFail(delivery, e)));
            return null;
        }
    }

    /** The timeout a step of these deliveries' sales ran into in this batch, if every one of them did. */
    private @Nullable RuntimeException stalledOn(List<Delivery> deliveries) {
        RuntimeException timeout = null;
        for (Delivery delivery : deliveries) {
            timeout = stalled.get(delivery.order().saleId());
            if (timeout == null) {
                return null;
            }
        }
        return timeout;
    }

    /** Marks the store unreachable for the rest of the batch: each further try would wait out a timeout. */
    void unreachable(RuntimeException cause) {
        unreachable = cause;
    }

    void ack(Delivery delivery, Outcome outcome) {
        metrics.order(outcome);
        record(delivery.tag(), Disposition.Kind.ACK);
    }

    void deadLetter(long tag) {
        record(tag, Disposition.Kind.DEAD_LETTER);
    }

    boolean requeues() {
        return byTag.containsValue(Disposition.Kind.REQUEUE);
    }

    List<Disposition> dispositions() {
        List<Disposition> dispositions = new ArrayList<>(byTag.size());
        byTag.forEach((tag, kind) -> dispositions.add(new Disposition(tag, kind)));
        return dispositions;
    }

    private void record(long tag, Disposition.Kind kind) {
        byTag.merge(tag, kind, (before, now) -> before.compareTo(now) >= 0 ? before : now);
    }

    private Disposition.Kind retryOrFail(Delivery delivery, RuntimeException cause) {
        FailureKind kind = FailureKind.of(cause);
        if (!kind.isTransient()) {
            return fail(delivery, WRITE_FAILED, cause);
        }
        if (delivery.attempt() >= maxAttempts) {
            return fail(delivery, RETRIES_EXHAUSTED, cause);
        }
        try {
            retries.schedule(delivery);
        } catch (RuntimeException e) {
            log.warn(
                    "Requeueing order {} of sale {}: its retry could not be published ({}) after {}",
                    delivery.order().orderId(),
                    delivery.order().saleId(),
                    e.toString(),
                    cause.toString());
            return Disposition.Kind.REQUEUE;
        }
        metrics.retried();
        markPublished(delivery);
        log.debug(
                "Order {} goes to the retry queue after attempt {}",
                delivery.order().orderId(),
                delivery.attempt());
        return Disposition.Kind.ACK;
    }

    /**
     * The broker holds the order again (its retry copy, confirmed): its record says so, CLAIMED back to
     * PUBLISHED, so that the reconciler waits for the copy however deep the queue it returns to. Best effort:
     * a record left CLAIMED is claimed, and so dated, anew when the copy is delivered; after one failure
     * (Redis unreachable) the batch stops trying, each try could wait out a timeout.
     */
    private void markPublished(Delivery delivery) {
        if (markingFailed) {
            return;
        }
        OrderRequested order = delivery.order();
        try {
            ledger.advance(
                    order.saleId(), order.orderId(), EnumSet.of(ReservationState.CLAIMED), ReservationState.PUBLISHED);
        } catch (RuntimeException e) {
            markingFailed = true;
            log.debug("Order {} waits for its retry still CLAIMED: {}", order.orderId(), e.toString());
        }
    }

    /** FAILED: the message is dead-lettered, and the order closed with the batch's others ({@link #closeFailed}). */
    private Disposition.Kind fail(Delivery delivery, String code, RuntimeException cause) {
        failed.add(new Failed(delivery, code, cause));
        metrics.order(Outcome.FAILED);
        metrics.deadLettered(DrainMetrics.DeadLetterReason.EXHAUSTED);
        return Disposition.Kind.DEAD_LETTER;
    }

    /**
     * Closes every order this batch failed, once its other steps are done: all of them recorded FAILED in
     * Postgres in one transaction, or none (one Postgres timeout however many), then each reservation
     * settled from what Postgres holds, until Redis refuses. A reservation left pending is settled by the
     * reconciler from the FAILED order Postgres now has (or, with none, closed once no queue holds its
     * message): never half the batch recorded and the rest left QUEUED for good.
     */
    void closeFailed() {
        if (failed.isEmpty()) {
            return;
        }
        List<OrderRequested> orders =
                failed.stream().map(failure -> failure.delivery().order()).toList();
        List<String> codes = failed.stream().map(Failed::code).toList();
        List<Closed> closed = failures.closeAll(orders, codes);
        for (int i = 0; i < failed.size(); i++) {
            Failed failure = failed.get(i);
            @Nullable Closed order = closed.isEmpty() ? null : closed.get(i);
            log.warn(
                    "Dead-lettering order {} of sale {} as {} after {} attempt(s) ({}, {}): {}",
                    failure.delivery().order().orderId(),
                    failure.delivery().order().saleId(),
                    failure.code(),
                    failure.delivery().attempt(),
                    order != null ? "stored as " + order.order().status() : "not stored",
                    order instanceof Closed.Settled
                            ? "reservation settled"
                            : "reservation held until the reconciler settles it",
                    failure.cause().toString());
        }
    }
}
