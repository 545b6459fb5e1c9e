package dev.flashsale.api.purchase;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.status.OrderTracker;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/** Answers a repeated Idempotency-Key from its original order, wherever the truth about it is. */
@Component
class Replays {

    private final StockLedger ledger;
    private final OrderTracker tracker;
    private final AsyncPurchase async;
    private final PurchaseProperties properties;
    private final Clock clock;

    Replays(StockLedger ledger, OrderTracker tracker, AsyncPurchase async, PurchaseProperties properties, Clock clock) {
        this.ledger = ledger;
        this.tracker = tracker;
        this.async = async;
        this.properties = properties;
        this.clock = clock;
    }

    /** What a replay learned: the original's answer, or that the original was given back. */
    sealed interface Answer {
        record Given(PurchaseOutcome outcome) implements Answer {}

        /**
         * The original's units were given back before anyone was told it exists (a 503, an API crash, an
         * unknown outcome settled as not written): no order exists under the key, which may make a new one.
         */
        record Released() implements Answer {}
    }

    /**
     * A repeated Idempotency-Key ({@code asked}: the original's id, sale and key): answer as the original
     * was answered. While the original is still in flight (RESERVED, or WRITING in SYNC), wait for it to
     * settle; a SYNC write still unsettled after that is looked up in Postgres, the truth for it. An ASYNC
     * record still RESERVED after the wait may be an order whose request still waits for its confirm, or one
     * the broker confirmed while Redis could not mark it: the replay answers 202 only once a message of its
     * own is confirmed ({@link AsyncPurchase#publishAgain}); otherwise the outcome is unknown (503 with the
     * order's Location), and the original request decides.
     */
    Answer answer(OrderRequested asked, ReservationState state, PurchaseMode mode, String code) {
        long saleId = asked.saleId();
        UUID orderId = asked.orderId();
        Instant deadline = clock.instant().plus(properties.replayWait());
        Optional<Reservation> current = Optional.empty();
        while ((state == ReservationState.RESERVED || state == ReservationState.WRITING)
                && clock.instant().isBefore(deadline)) {
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
            current = ledger.find(saleId, orderId);
            state = current.map(Reservation::state).orElse(ReservationState.RELEASED);
            code = current.map(Reservation::code).orElse("");
        }
        if (state == ReservationState.RESERVED && mode == PurchaseMode.ASYNC) {
            Reservation record =
                    current.orElseGet(() -> ledger.find(saleId, orderId).orElseThrow(() -> unknown(orderId)));
            AsyncPurchase.Handoff handoff = async.publishAgain(new OrderRequested(
                    orderId,
                    saleId,
                    record.userId(),
                    record.quantity(),
                    record.createdAt(),
                    asked.idempotencyKey(),
                    asked.fingerprint()));
            state = switch (handoff) {
                case ACCEPTED -> ReservationState.PUBLISHED;
                case RELEASED -> ReservationState.RELEASED;
                case UNKNOWN -> throw unknown(orderId);
            };
        }
        switch (state) {
            case REFUSED -> throw Purchases.refusal(code);
            case RELEASED -> {
                return new Answer.Released();
            }
            case RESERVED -> throw unknown(orderId); // a SYNC batch that has not begun writing it yet
            case WRITING -> {
                return new Answer.Given(writtenOrUnknown(saleId, orderId));
            }
            default -> {}
        }
        if (mode == PurchaseMode.SYNC && state == ReservationState.REJECTED) {
            throw Purchases.refusal(rejection(code));
        }
        OrderView order = tracker.find(saleId, orderId).orElseThrow(() -> unknown(orderId));
        return new Answer.Given(
                new PurchaseOutcome(order, mode == PurchaseMode.SYNC ? HttpStatus.CREATED : HttpStatus.ACCEPTED, null));
    }

    /**
     * A SYNC write whose outcome Redis does not know (its commit's acknowledgement was lost): Postgres
     * answers, and Redis follows it. Not there (yet), or Postgres unreachable: 503, the key stays bound.
     */
    private PurchaseOutcome writtenOrUnknown(long saleId, UUID orderId) {
        Optional<OrderView> written;
        try {
            written = tracker.written(orderId);
        } catch (RuntimeException e) {
            written = Optional.empty();
        }
        if (written.isEmpty()) {
            throw unknown(orderId);
        }
        OrderView order = written.get();
        try {
            ledger.settle(saleId, orderId, order.status(), order.failureCode() == null ? "" : order.failureCode());
        } catch (RuntimeException e) {
            // The reconciler settles it from Postgres after its grace.
        }
        return switch (order.status()) {
            case CONFIRMED -> new PurchaseOutcome(order, HttpStatus.CREATED, null);
            case REJECTED -> throw Purchases.refusal(rejection(order.failureCode()));
            case QUEUED, FAILED -> throw unavailable("The original request did not complete; retry later.");
        };
    }

    /**
     * A purchase with an Idempotency-Key while Redis cannot bind it: nothing can be sold, but an order the
     * key already made is in Postgres, and its shopper gets it as the original was answered.
     */
    PurchaseOutcome withoutRedis(String userId, String key, long saleId, int quantity) {
        Optional<OrderView> written;
        try {
            written = tracker.writtenUnder(userId, key, IdempotencyKeys.fingerprint(saleId, quantity));
        } catch (RuntimeException e) {
            written = Optional.empty();
        }
        OrderView order =
                written.orElseThrow(() -> unavailable("Stock cannot be checked right now; nothing was reserved."));
        if (order.mode() == PurchaseMode.ASYNC) {
            return new PurchaseOutcome(order, HttpStatus.ACCEPTED, null);
        }
        return switch (order.status()) {
            case CONFIRMED -> new PurchaseOutcome(order, HttpStatus.CREATED, null);
            case REJECTED -> throw Purchases.refusal(rejection(order.failureCode()));
            case QUEUED, FAILED -> throw unavailable("The original request did not complete; retry later.");
        };
    }

    /** A SYNC order Postgres rejected: past the per-user quota (its own code), else sold out. */
    private static String rejection(@Nullable String code) {
        return OrderStore.LIMIT_REACHED.equals(code) ? OrderStore.LIMIT_REACHED : "SOLD_OUT";
    }

    private ApiProblem unavailable(String detail) {
        return ApiProblem.unavailable(detail, properties.unavailableRetryAfter());
    }

    private ApiProblem unknown(UUID orderId) {
        return ApiProblem.outcomeUnknown(
                orderId,
                "The order's outcome is not known yet: retry with the same Idempotency-Key, or read the order at its Location.",
                properties.unavailableRetryAfter());
    }
}
