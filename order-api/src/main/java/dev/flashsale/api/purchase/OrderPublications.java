package dev.flashsale.api.purchase;

import dev.flashsale.api.purchase.AsyncPurchase.Publication;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Reserved ASYNC orders to the broker and back: one message and one publisher confirm for a batch, then their
 * records marked PUBLISHED, one script call per sale; a reservation released when no confirm came. No confirm
 * (nack, return, timeout, broker down) releases the reservations, except one a worker already claimed, which
 * is accepted after all.
 */
@Component
class OrderPublications {

    private static final Logger log = LoggerFactory.getLogger(OrderPublications.class);
    private static final int MARK_PUBLISHED_ATTEMPTS = 3;

    private final OrderPublisher publisher;
    private final StockLedger ledger;
    private final BlockedBroker blocked;
    private final CircuitBreaker breaker;

    OrderPublications(
            OrderPublisher publisher, StockLedger ledger, BlockedBroker blocked, CircuitBreakerRegistry breakers) {
        this.publisher = publisher;
        this.ledger = ledger;
        this.blocked = blocked;
        this.breaker = breakers.circuitBreaker(AsyncPurchase.BREAKER);
    }

    /**
     * The publication of reserved orders: one message, one confirm, then each order marked PUBLISHED. The
     * caller holds a permission of the broker's breaker, which this records the outcome in.
     */
    List<Publication> publish(List<OrderRequested> orders) {
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
        return orders.stream().map(order -> release(order, failed, true)).toList();
    }

    /**
     * A release that cannot reach Redis leaves the record RESERVED: a message that timed out may still reach
     * a worker, which claims RESERVED records, so the order may yet exist (UNKNOWN, never "nothing taken").
     * A record that is missing was never made if the order was not {@code reserved} before its batch (nothing
     * taken), else Redis lost it (UNKNOWN).
     */
    Publication release(OrderRequested order, OrderPublisher.Outcome outcome, boolean reserved) {
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
            return reserved ? Publication.UNKNOWN : Publication.RELEASED;
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
}
