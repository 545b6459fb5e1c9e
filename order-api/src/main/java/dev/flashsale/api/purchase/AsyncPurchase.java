package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.mode.Breakers;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveResult;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The ASYNC path, as a group commit: concurrent purchases are reserved in one script call per sale
 * ({@link BatchReserves}), share one message and one publisher confirm, then one script call per sale marks
 * their reservations PUBLISHED for the worker. Each
 * request answers 202 only after the confirm of the message that carries its order. No confirm (nack,
 * return, timeout, broker down) releases the reservations — except one a worker already claimed, which
 * is accepted after all. The worker drops an order whose reservation was released, so a late message
 * never becomes an order nobody was told about.
 */
@Component
class AsyncPurchase implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(AsyncPurchase.class);
    static final String BREAKER = "broker";

    private final OrderPublications publications;
    private final BatchReserves reserves;
    private final CircuitBreaker breaker;
    private final GroupCommit<Ask, Taken> batches;
    private final AutoPilot autoPilot;
    private final BlockedBroker blocked;

    AsyncPurchase(
            OrderPublications publications,
            BatchReserves reserves,
            AutoPilot autoPilot,
            BlockedBroker blocked,
            CircuitBreakerRegistry breakers,
            PurchaseProperties properties,
            MeterRegistry meters) {
        this.publications = publications;
        this.reserves = reserves;
        this.autoPilot = autoPilot;
        this.blocked = blocked;
        this.breaker = breakers.circuitBreaker(BREAKER);
        this.batches = new GroupCommit<>("async", properties.async(), this::publish, meters);
    }

    /**
     * Whether the broker path would take a purchase now: the broker does not block publishing, its breaker is
     * not open, its queue not late.
     */
    boolean looksAvailable() {
        return !blocked.blocked() && !Breakers.open(breaker) && batches.admits();
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

    /** An order for a batch: {@code reserved} already (held back by a batch, then checked), or to reserve there. */
    record Ask(OrderRequested order, boolean reserved, boolean admit) {}

    /** How an order left the path: published (or not), or no further than Redis ({@link NotTaken}). */
    sealed interface Taken permits Taken.Published, NotTaken.NotReserved, NotTaken.HeldBack, NotTaken.ReserveFailed {
        record Published(Publication publication) implements Taken {}
    }

    /**
     * Reserves (unless {@code reserved}) and publishes the order with the others that arrive meanwhile. An order
     * whose request stops waiting is released if its reservation is still RESERVED; if it had none, nothing was
     * taken (RELEASED). {@code admit}: its reserve call counts the attempt and binds its key
     * ({@link BatchReserves.Order}).
     */
    Taken take(OrderRequested order, boolean reserved, boolean admit) {
        long started = System.nanoTime();
        // The linger is left out of the path's measure: under traffic either path lingers alike, while an
        // idle probe or a rehearsal of the other path goes alone and does not (AUTO compares like for like).
        AtomicLong lingered = new AtomicLong();
        Taken taken;
        try {
            taken = batches.submit(new Ask(order, reserved, admit), lingered::set);
        } catch (Overdue e) { // its publish may yet be confirmed: released only if still RESERVED
            log.debug("order {} waited too long for its publication: {}", order.orderId(), e.toString());
            // A round that took it may reserve it yet: a record missing now is no proof that nothing was taken.
            return new Taken.Published(
                    publications.release(order, OrderPublisher.Outcome.TIMED_OUT, reserved || e.roundBegun()));
        } catch (RuntimeException e) { // shutting down, or a bug in the batch: nothing was published for it
            log.debug("order {} was not published: {}", order.orderId(), e.toString());
            return new Taken.Published(publications.release(order, OrderPublisher.Outcome.FAILED, reserved));
        }
        if (taken instanceof Taken.Published published && published.publication() == Publication.ACCEPTED) {
            // Only a confirmed publication measures the path: an open breaker releases at once, which would
            // read as a fast ASYNC.
            autoPilot.asyncTook(System.nanoTime() - started - lingered.get());
        }
        return taken;
    }

    /**
     * One group: its orders reserved, one call per sale; those Redis reserved published in one message, one
     * confirm, then marked PUBLISHED. With the broker blocked or its breaker open nothing is reserved.
     */
    private List<Taken> publish(List<Ask> asks) {
        if (blocked.blocked()) { // queued before the block: its confirm would come only after the alarm
            return asks.stream()
                    .map(ask -> untaken(ask, OrderPublisher.Outcome.BLOCKED))
                    .toList();
        }
        if (!breaker.tryAcquirePermission()) {
            return asks.stream()
                    .map(ask -> untaken(ask, OrderPublisher.Outcome.FAILED))
                    .toList();
        }
        List<BatchReserves.Order> unreserved = asks.stream()
                .filter(ask -> !ask.reserved())
                .map(ask -> new BatchReserves.Order(ask.order(), ask.admit()))
                .toList();
        BatchReserves.Reserves reserved = reserves.reserve(unreserved, PurchasePath.ASYNC, ReservationState.RESERVED);
        Iterator<@Nullable ReserveResult> results = reserved.results().iterator();
        Taken[] taken = new Taken[asks.size()];
        List<OrderRequested> orders = new ArrayList<>(asks.size());
        List<Integer> positions = new ArrayList<>(asks.size());
        for (int i = 0; i < asks.size(); i++) {
            OrderRequested order = asks.get(i).order();
            ReserveResult result = asks.get(i).reserved() ? null : results.next();
            if (asks.get(i).reserved() || (result instanceof ReserveResult.Reserved r && !mayBeReplay(order, r))) {
                orders.add(order);
                positions.add(i);
            } else {
                taken[i] = switch (result) {
                    // Its sale's reserve call failed: not released here, which would wait on Redis once more. One
                    // that got no answer may have run and left a RESERVED record without a message, which the
                    // reconciler publishes once past its grace: the order's outcome is not known (UNKNOWN).
                    case null ->
                        reserved.unanswered().contains(order.saleId())
                                ? new Taken.Published(Publication.UNKNOWN)
                                : new NotTaken.ReserveFailed();
                    case ReserveResult.Reserved r -> new NotTaken.HeldBack(r);
                    default -> new NotTaken.NotReserved(result);
                };
            }
        }
        if (orders.isEmpty()) {
            breaker.releasePermission();
        } else {
            List<Publication> published = publications.publish(orders);
            for (int i = 0; i < orders.size(); i++) {
                taken[positions.get(i)] = new Taken.Published(published.get(i));
            }
        }
        return Arrays.asList(taken);
    }

    /** A fresh key whose shopper held units already: its order may exist under the key (a lost binding). */
    private static boolean mayBeReplay(OrderRequested order, ReserveResult.Reserved reserved) {
        return order.idempotencyKey() != null && reserved.heldBefore() > 0;
    }

    /** An order a batch takes nothing for: released if it was reserved, else RELEASED without asking Redis. */
    private Taken untaken(Ask ask, OrderPublisher.Outcome outcome) {
        return new Taken.Published(
                ask.reserved() ? publications.release(ask.order(), outcome, true) : Publication.RELEASED);
    }

    /**
     * A replay that finds its order still RESERVED after its wait publishes it once more
     * ({@link OrderPublications#publishAgain}).
     */
    Publication publishAgain(OrderRequested order) {
        return publications.publishAgain(order);
    }

    @Override
    public void destroy() {
        batches.close();
    }
}
