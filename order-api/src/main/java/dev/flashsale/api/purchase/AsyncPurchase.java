package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.mode.Breakers;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The ASYNC path, as a group commit: concurrent purchases share one message and one publisher confirm,
 * then one script call per sale marks their reservations PUBLISHED for the worker. Each
 * request answers 202 only after the confirm of the message that carries its order. No confirm (nack,
 * return, timeout, broker down) releases the reservations — except one a worker already claimed, which
 * is accepted after all. The worker drops an order whose reservation was released, so a late message
 * never becomes an order nobody was told about.
 */
@Component
class AsyncPurchase implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(AsyncPurchase.class);
    static final String BREAKER = "broker";
    private static final int MARK_PUBLISHED_ATTEMPTS = 3;

    private final OrderPublisher publisher;
    private final StockLedger ledger;
    private final CircuitBreaker breaker;
    private final GroupCommit<OrderRequested, Publication> publications;
    private final AutoPilot autoPilot;
    private final BlockedBroker blocked;

    AsyncPurchase(
            OrderPublisher publisher,
            StockLedger ledger,
            AutoPilot autoPilot,
            BlockedBroker blocked,
            CircuitBreakerRegistry breakers,
            PurchaseProperties properties,
            MeterRegistry meters) {
        this.publisher = publisher;
        this.ledger = ledger;
        this.autoPilot = autoPilot;
        this.blocked = blocked;
        this.breaker = breakers.circuitBreaker(BREAKER);
        this.publications = new GroupCommit<>("async", properties.async(), this::publish, meters);
    }

    /**
     * Whether the broker path would take a purchase now: the broker does not block publishing, its breaker is
     * not open, its queue not late.
     */
    boolean looksAvailable() {
        return !blocked.blocked() && !Breakers.open(breaker) && publications.admits();
    }

    /** How the order's publication ended: ACCEPTED (the worker owns it) or RELEASED (nothing is held, 503). */
    enum Publication {
        ACCEPTED,
        /** Released: provably no order exists, the Idempotency-Key may be reused. */
        RELEASED,
        /** Unknown: a worker may still write it; answer 503 but keep the Idempotency-Key bound. */
        UNKNOWN,
        /**
         * Closed FAILED before a worker took it (the reconciler's hand-off timeout ran out first): the order
         * exists and holds nothing; never 202.
         */
        FAILED
    }

    Publication take(OrderRequested order) {
        long started = System.nanoTime();
        // The linger is left out of the path's measure: under traffic either path lingers alike, while an
        // idle probe or a rehearsal of the other path goes alone and does not (AUTO compares like for like).
        AtomicLong lingered = new AtomicLong();
        Publication publication;
        try {
            publication = publications.submit(order, lingered::set);
        } catch (Overdue e) { // its publish may yet be confirmed: released only if still RESERVED
            log.debug("order {} waited too long for its publication: {}", order.orderId(), e.toString());
            return release(order, OrderPublisher.Outcome.TIMED_OUT);
        } catch (RuntimeException e) { // shutting down, or a bug in the batch: nothing was published for it
            log.debug("order {} was not published: {}", order.orderId(), e.toString());
            return release(order, OrderPublisher.Outcome.FAILED);
        }
        if (publication == Publication.ACCEPTED) {
            // Only a confirmed publication measures the path: an open breaker releases at once, which would
            // read as a fast ASYNC.
            autoPilot.asyncTook(System.nanoTime() - started - lingered.get());
        }
        return publication;
    }

    /** The publication of one group: one message, one confirm, then each order marked PUBLISHED. */
    private List<Publication> publish(List<OrderRequested> orders) {
        if (blocked.blocked()) { // queued before the block: its confirm would come only after the alarm
            return orders.stream()
                    .map(order -> release(order, OrderPublisher.Outcome.BLOCKED))
                    .toList();
        }
        if (!breaker.tryAcquirePermission()) {
            return orders.stream()
                    .map(order -> release(order, OrderPublisher.Outcome.FAILED))
                    .toList();
        }
        long started = System.nanoTime();
        OrderPublisher.Outcome outcome;
        try {
            outcome = publisher.publish(orders);
        } catch (RuntimeException e) {
            log.debug("publish of {} orders failed: {}", orders.size(), e.toString());
            outcome = OrderPublisher.Outcome.FAILED;
        }
        long elapsed = System.nanoTime() - started;
        if (outcome == OrderPublisher.Outcome.CONFIRMED) {
            breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            // Its own message confirmed: only this request would release a RESERVED record, so one Redis
            // could not mark is accepted all the same.
            return markPublished(orders, Publication.ACCEPTED);
        }
        if (outcome == OrderPublisher.Outcome.BUSY) {
            breaker.releasePermission(); // our own channel pool was exhausted: not the broker's fault
        } else {
            breaker.onError(elapsed, TimeUnit.NANOSECONDS, new IllegalStateException("publish " + outcome));
        }
        log.debug("{} orders not confirmed by the broker: {}", orders.size(), outcome);
        OrderPublisher.Outcome failed = outcome;
        return orders.stream().map(order -> release(order, failed)).toList();
    }

    /**
     * A release that cannot reach Redis leaves the record RESERVED: a message that timed out may still reach
     * a worker, which claims RESERVED records, so the order may yet exist (UNKNOWN, never "nothing taken").
     */
    private Publication release(OrderRequested order, OrderPublisher.Outcome outcome) {
        Transition released;
        try {
            released = ledger.release(
                    order.saleId(),
                    order.orderId(),
                    EnumSet.of(ReservationState.RESERVED),
                    ReservationState.RELEASED,
                    "BROKER_" + outcome);
        } catch (RuntimeException e) {
            log.debug("order {} not released after {}: {}", order.orderId(), outcome, e.toString());
            return Publication.UNKNOWN;
        }
        if (released.changed() || released.state() == ReservationState.RELEASED) {
            return Publication.RELEASED;
        }
        if (released.missing()) {
            return Publication.UNKNOWN;
        }
        // A late confirm raced us: its message carries the order (PUBLISHED, or a worker has it), unless the
        // reconciler closed it first.
        return released.state() == ReservationState.FAILED ? Publication.FAILED : Publication.ACCEPTED;
    }

    /**
     * A replay that finds its order still RESERVED after its wait: the original request may still be waiting
     * for its confirm, or it was confirmed while Redis could not mark it. Either way the replay may answer 202
     * only with a message behind it, so it publishes the order once more (a worker claims and writes an order
     * once, however many messages carry it). Confirmed and marked PUBLISHED: ACCEPTED, since nothing can release
     * it any more (RELEASED if the original released it meanwhile). Not confirmed, or confirmed but not marked:
     * UNKNOWN, and nothing is released here: the original request, whose own publish may still fail and
     * release the record, or the reconciler, decides.
     */
    Publication publishAgain(OrderRequested order) {
        if (blocked.blocked() || !breaker.tryAcquirePermission()) {
            return Publication.UNKNOWN;
        }
        long started = System.nanoTime();
        OrderPublisher.Outcome outcome;
        try {
            outcome = publisher.publish(List.of(order));
        } catch (RuntimeException e) {
            outcome = OrderPublisher.Outcome.FAILED;
        }
        long elapsed = System.nanoTime() - started;
        if (outcome != OrderPublisher.Outcome.CONFIRMED) {
            breaker.onError(elapsed, TimeUnit.NANOSECONDS, new IllegalStateException("publish " + outcome));
            return Publication.UNKNOWN;
        }
        breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
        return markPublished(List.of(order), Publication.UNKNOWN).getFirst();
    }

    /**
     * The broker owns the message: index each order for status reads and move its record to PUBLISHED,
     * one round trip per sale. What each order's publication came to: from the state its record is in, or
     * {@code unmarked} when Redis could not be reached.
     */
    private List<Publication> markPublished(List<OrderRequested> orders, Publication unmarked) {
        Map<UUID, Publication> outcomes = new HashMap<>();
        OrderRequested.bySale(orders, order -> order).forEach((saleId, ofSale) -> {
            List<UUID> ids = OrderRequested.ids(ofSale);
            List<Transition> marked = markPublished(saleId, ids);
            for (int i = 0; i < ids.size(); i++) {
                outcomes.put(ids.get(i), marked == null ? unmarked : publication(marked.get(i)));
            }
        });
        return orders.stream().map(order -> outcomes.get(order.orderId())).toList();
    }

    /**
     * A confirmed order's record after the PUBLISHED mark: PUBLISHED now, a worker's states, or lost with Redis
     * (the message is queued all the same) are accepted; RELEASED (the request gave up meanwhile: the worker
     * drops the message) and FAILED (the reconciler closed it first) are not.
     */
    private static Publication publication(Transition marked) {
        ReservationState state = marked.state();
        if (marked.changed() || state == null) {
            return Publication.ACCEPTED;
        }
        return switch (state) {
            case RELEASED -> Publication.RELEASED;
            case FAILED -> Publication.FAILED;
            default -> Publication.ACCEPTED;
        };
    }

    /**
     * Indexes the orders and moves their records to PUBLISHED, trying a few times: both steps are
     * idempotent, and a Redis blip here would otherwise turn orders the broker already holds into 503s.
     * Null when Redis stays unreachable: the messages are queued but the records still say RESERVED. The
     * answer is 202 all the same: a worker claims RESERVED records too, and the reconciler leaves an ASYNC
     * reservation alone for its whole hand-off timeout, longer than the message's retry budget.
     */
    private @Nullable List<Transition> markPublished(long saleId, List<UUID> ids) {
        for (int attempt = 1; ; attempt++) {
            try {
                return ledger.markPublished(saleId, ids);
            } catch (RuntimeException e) {
                if (attempt >= MARK_PUBLISHED_ATTEMPTS) {
                    log.warn(
                            "{} orders of sale {} published but not marked PUBLISHED: {}",
                            ids.size(),
                            saleId,
                            e.toString());
                    return null;
                }
                LockSupport.parkNanos(Duration.ofMillis(50L * attempt).toNanos());
            }
        }
    }

    @Override
    public void destroy() {
        publications.close();
    }
}
