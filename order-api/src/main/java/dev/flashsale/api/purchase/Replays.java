package dev.flashsale.api.purchase;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.status.OrderTracker;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Objects;
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
    private final IdempotencyKeys keys;
    private final PurchaseCounts counts;
    private final PurchaseProperties properties;
    private final Clock clock;

    Replays(
            StockLedger ledger,
            OrderTracker tracker,
            AsyncPurchase async,
            IdempotencyKeys keys,
            PurchaseCounts counts,
            PurchaseProperties properties,
            Clock clock) {
        this.ledger = ledger;
        this.tracker = tracker;
        this.async = async;
        this.keys = keys;
        this.counts = counts;
        this.properties = properties;
        this.clock = clock;
    }

    /** What a replay learned: the original's answer, or a fresh order to take the purchase as new. */
    sealed interface Answer {
        record Given(PurchaseOutcome outcome) implements Answer {}

        /**
         * The original's units were given back before anyone was told it exists (a 503, an API crash, an
         * unknown outcome settled as not written): no order exists under the key, which is now bound to
         * this fresh one.
         */
        record Rebound(IdempotencyKeys.Binding binding) implements Answer {}
    }

    /**
     * A replayed key's original order, if Redis holds its reservation: the replay is answered from it,
     * whatever the paths' state is now. Empty when Redis holds none: the purchase is taken under the key's
     * order id (a reserve of it still finds an original another request made meanwhile).
     */
    Optional<Answer> original(PurchaseAttempt attempt, IdempotencyKeys.Binding binding, boolean mayRebind) {
        return ledger.find(attempt.saleId(), binding.orderId())
                .map(found ->
                        replay(asked(attempt, binding), binding, found.state(), found.mode(), found.code(), mayRebind));
    }

    /** The original order a replay asks about: its id, and the key and fingerprint it was bound with. */
    private OrderRequested asked(PurchaseAttempt attempt, IdempotencyKeys.Binding binding) {
        return new OrderRequested(
                binding.orderId(),
                attempt.saleId(),
                attempt.userId(),
                attempt.quantity(),
                clock.instant(),
                attempt.idempotencyKey(),
                binding.fingerprint());
    }

    /**
     * A replay's answer, from its original's reservation ({@code state}, {@code mode}, {@code code}); when the
     * original was given back, the key is bound to a fresh order and the purchase is taken as new, once
     * ({@code mayRebind}): a replay is never told to retry for ever.
     */
    Answer replay(
            OrderRequested asked,
            IdempotencyKeys.Binding binding,
            ReservationState state,
            PurchasePath mode,
            String code,
            boolean mayRebind) {
        counts.count(mode, "REPLAY");
        Optional<PurchaseOutcome> given = answer(asked, state, mode, code);
        if (given.isPresent()) {
            return new Answer.Given(given.get());
        }
        if (!mayRebind) { // given back twice within one request: another replay races this one
            throw unavailable("The purchase did not complete; nothing was taken. Retry with the same key.");
        }
        try {
            return new Answer.Rebound(keys.rebind(
                    asked.userId(), Objects.requireNonNull(asked.idempotencyKey()), asked.saleId(), binding));
        } catch (ApiProblem reused) {
            throw reused;
        } catch (RuntimeException e) {
            throw unavailable("Stock cannot be checked right now; nothing was reserved.");
        }
    }

    /**
     * A repeated Idempotency-Key ({@code asked}: the original's id, sale and key): answer as the original
     * was answered. While the original is still in flight (RESERVED, or WRITING in SYNC), wait for it to
     * settle; a SYNC write still unsettled after that is looked up in Postgres, the truth for it. An ASYNC
     * record still RESERVED after the wait may be an order whose request still waits for its confirm, or one
     * the broker confirmed while Redis could not mark it: the replay answers 202 only once a message of its
     * own is confirmed ({@link AsyncPurchase#publishAgain}); otherwise the outcome is unknown (503 with the
     * order's Location), and the original request decides. Empty when the original was given back.
     */
    private Optional<PurchaseOutcome> answer(
            OrderRequested asked, ReservationState state, PurchasePath mode, String code) {
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
        if (state == ReservationState.RESERVED && mode == PurchasePath.ASYNC) {
            Reservation record =
                    current.orElseGet(() -> ledger.find(saleId, orderId).orElseThrow(() -> unknown(orderId)));
            AsyncPurchase.Publication publication = async.publishAgain(new OrderRequested(
                    orderId,
                    saleId,
                    record.userId(),
                    record.quantity(),
                    record.createdAt(),
                    asked.idempotencyKey(),
                    asked.fingerprint()));
            state = switch (publication) {
                case ACCEPTED -> ReservationState.PUBLISHED;
                case RELEASED -> ReservationState.RELEASED;
                case UNKNOWN -> throw unknown(orderId);
                case FAILED -> ReservationState.FAILED;
            };
        }
        if (mode == PurchasePath.ASYNC && state == ReservationState.FAILED) {
            throw PurchasePaths.closedFailed(orderId, properties.unavailableRetryAfter());
        }
        switch (state) {
            case REFUSED -> throw ApiProblem.refused(ProblemCode.refusal(code));
            case RELEASED -> {
                return Optional.empty();
            }
            case RESERVED -> throw unknown(orderId); // a SYNC batch that has not begun writing it yet
            case WRITING -> {
                return Optional.of(writtenOrUnknown(saleId, orderId));
            }
            default -> {}
        }
        if (mode == PurchasePath.SYNC && state == ReservationState.REJECTED) {
            throw ApiProblem.refused(SyncPurchase.rejection(code));
        }
        OrderView order = tracker.find(saleId, orderId).orElseThrow(() -> unknown(orderId));
        return Optional.of(
                new PurchaseOutcome(order, mode == PurchasePath.SYNC ? HttpStatus.CREATED : HttpStatus.ACCEPTED, null));
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
        return answered(order);
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
        return fromPostgres(
                written.orElseThrow(() -> unavailable("Stock cannot be checked right now; nothing was reserved.")));
    }

    /**
     * A purchase whose key Redis bound afresh although its shopper holds units in the sale, or that Postgres
     * refused for an order under its key: Redis lost the key's binding (its TTL ran out while the sale is open,
     * a failover to a replica that had not got it) while the order exists. When Postgres holds an order of
     * this very request under the key, it is the answer: the units the attempt reserved ({@code held}) are
     * given back, and the key bound to that order again. Empty when Postgres has none (the purchase is new),
     * or cannot be asked (the purchase goes on; Postgres's unique key still refuses a second order).
     */
    Optional<PurchaseOutcome> lostBinding(
            PurchaseAttempt attempt, IdempotencyKeys.Binding fresh, @Nullable OrderRequested held) {
        String key = Objects.requireNonNull(attempt.idempotencyKey());
        Optional<OrderView> written;
        try {
            written = tracker.writtenUnder(attempt.userId(), key, fresh.fingerprint());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
        if (written.isEmpty()) {
            return Optional.empty();
        }
        OrderView order = written.get();
        try {
            if (held != null) {
                ledger.release(
                        attempt.saleId(),
                        held.orderId(),
                        EnumSet.of(ReservationState.RESERVED),
                        ReservationState.RELEASED,
                        "REPLAYED");
            }
            keys.restore(attempt.userId(), key, fresh, order.orderId());
        } catch (RuntimeException e) {
            // The reconciler gives an unreleased reservation back; the next replay asks Postgres again.
        }
        counts.count(order.mode(), "REPLAY");
        return Optional.of(fromPostgres(order));
    }

    /** An order as Postgres holds it, answered as its original request was (ASYNC: 202, never for FAILED). */
    private PurchaseOutcome fromPostgres(OrderView order) {
        if (order.mode() == PurchasePath.SYNC) {
            return answered(order);
        }
        if (order.status() == OrderStatus.FAILED) {
            throw PurchasePaths.closedFailed(order.orderId(), properties.unavailableRetryAfter());
        }
        return new PurchaseOutcome(order, HttpStatus.ACCEPTED, null);
    }

    /** A SYNC order as Postgres holds it, answered as its original request was (or would have been). */
    private PurchaseOutcome answered(OrderView order) {
        return switch (order.status()) {
            case CONFIRMED -> new PurchaseOutcome(order, HttpStatus.CREATED, null);
            case REJECTED -> throw ApiProblem.refused(SyncPurchase.rejection(order.failureCode()));
            case QUEUED, FAILED -> throw unavailable("The original request did not complete; retry later.");
        };
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
