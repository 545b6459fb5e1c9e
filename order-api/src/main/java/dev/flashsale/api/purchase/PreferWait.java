package dev.flashsale.api.purchase;

import dev.flashsale.api.status.OrderTracker;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.common.order.OrderStatus;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/** {@code Prefer: wait=N} (RFC 7240) on an order the ASYNC path accepted: the shopper waits for the worker. */
@Component
class PreferWait {

    private final OrderTracker tracker;
    private final PurchaseProperties properties;
    private final Clock clock;

    PreferWait(OrderTracker tracker, PurchaseProperties properties, Clock clock) {
        this.tracker = tracker;
        this.properties = properties;
        this.clock = clock;
    }

    /**
     * Waits up to N seconds (capped) for the worker; 201 if it confirmed. Its caller has given up the
     * purchase's place at the door first: this only waits.
     */
    PurchaseOutcome awaitFinal(PurchaseOutcome accepted, Duration wait) {
        OrderView order = accepted.order();
        Duration capped = wait.compareTo(properties.maxPreferWait()) > 0 ? properties.maxPreferWait() : wait;
        String applied = "wait=" + capped.toSeconds();
        Instant deadline = clock.instant().plus(capped);
        do {
            Optional<OrderView> current;
            try {
                current = tracker.find(order.saleId(), order.orderId());
            } catch (RuntimeException e) { // neither store answers now: the order was accepted all the same
                return accepted.applying(applied);
            }
            if (current.isPresent() && current.get().status().isFinal()) {
                HttpStatus status =
                        current.get().status() == OrderStatus.CONFIRMED ? HttpStatus.CREATED : HttpStatus.ACCEPTED;
                return new PurchaseOutcome(current.get(), status, applied);
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        } while (clock.instant().isBefore(deadline));
        return accepted.applying(applied);
    }
}
