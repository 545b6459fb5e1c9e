package dev.flashsale.api.purchase;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The ASYNC path: publish with confirms, then hand the reservation to the worker (RESERVED → PUBLISHED).
 * No confirm (nack, return, timeout, broker down) releases the reservation — unless a worker already
 * claimed the order, in which case it is accepted after all. The worker drops a message whose
 * reservation was released, so a late message never becomes an order nobody was told about.
 */
@Component
class AsyncPurchase {

    private static final Logger log = LoggerFactory.getLogger(AsyncPurchase.class);
    static final String BREAKER = "broker";

    private final OrderPublisher publisher;
    private final StockLedger ledger;
    private final CircuitBreaker breaker;

    AsyncPurchase(OrderPublisher publisher, StockLedger ledger, CircuitBreakerRegistry breakers) {
        this.publisher = publisher;
        this.ledger = ledger;
        this.breaker = breakers.circuitBreaker(BREAKER);
    }

    /** Whether the broker path would take a purchase now: its breaker is not open. */
    boolean looksAvailable() {
        return breaker.getState() != CircuitBreaker.State.OPEN
                && breaker.getState() != CircuitBreaker.State.FORCED_OPEN;
    }

    /** What happened to the order: ACCEPTED (the worker owns it) or RELEASED (nothing is held, 503). */
    enum Handoff {
        ACCEPTED,
        /** Released: provably no order exists, the Idempotency-Key may be reused. */
        RELEASED,
        /** Unknown: a worker may still write it; answer 503 but keep the Idempotency-Key bound. */
        UNKNOWN
    }

    Handoff take(OrderRequested order) {
        if (!breaker.tryAcquirePermission()) {
            return release(order, OrderPublisher.Outcome.FAILED);
        }
        long started = System.nanoTime();
        OrderPublisher.Outcome outcome;
        try {
            ledger.indexOrder(order.orderId(), order.saleId());
            outcome = publisher.publish(order);
        } catch (RuntimeException e) {
            log.debug("publish of order {} failed: {}", order.orderId(), e.toString());
            outcome = OrderPublisher.Outcome.FAILED;
        }
        long elapsed = System.nanoTime() - started;
        if (outcome == OrderPublisher.Outcome.CONFIRMED) {
            breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            return handOver(order);
        }
        if (outcome == OrderPublisher.Outcome.BUSY) {
            breaker.releasePermission(); // our own channel pool was exhausted: not the broker's fault
        } else {
            breaker.onError(elapsed, TimeUnit.NANOSECONDS, new IllegalStateException("publish " + outcome));
        }
        log.debug("order {} not confirmed by the broker: {}", order.orderId(), outcome);
        return release(order, outcome);
    }

    private Handoff release(OrderRequested order, OrderPublisher.Outcome outcome) {
        Transition released = ledger.release(
                order.saleId(),
                order.orderId(),
                EnumSet.of(ReservationState.RESERVED),
                ReservationState.RELEASED,
                "BROKER_" + outcome);
        if (released.changed() || released.state() == ReservationState.RELEASED) {
            return Handoff.RELEASED;
        }
        // A late confirm raced us: a worker claimed the order, so it exists and will be written.
        return released.missing() ? Handoff.UNKNOWN : Handoff.ACCEPTED;
    }

    private Handoff handOver(OrderRequested order) {
        try {
            Transition handed = ledger.advance(
                    order.saleId(), order.orderId(), EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED);
            return handed.state() == ReservationState.RELEASED ? Handoff.RELEASED : Handoff.ACCEPTED;
        } catch (RuntimeException e) {
            // The message is queued but the record still says RESERVED: either the worker writes it or the
            // sweeper releases it. Both agree with a 503 for an order the client may replay by its key.
            log.warn("order {} published but not handed over: {}", order.orderId(), e.toString());
            return Handoff.UNKNOWN;
        }
    }
}
