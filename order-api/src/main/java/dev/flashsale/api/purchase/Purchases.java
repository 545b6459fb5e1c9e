package dev.flashsale.api.purchase;

import dev.flashsale.api.input.Preference;
import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.purchase.PurchasePaths.PathEnd;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.api.sale.Sale;
import dev.flashsale.api.sale.SaleCatalogue;
import dev.flashsale.api.throttle.PurchaseThrottle;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReserveResult;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;

/**
 * Takes a purchase: counts the attempt and binds its Idempotency-Key, answers a replayed key from its
 * original ({@link Replays}), picks the path ({@link PurchasePaths}), reserves in Redis
 * ({@link Reservations}) and hands the order to the SYNC or ASYNC path. Whatever fails after the
 * reservation gives it back before answering 503, and frees the key.
 */
@Service
class Purchases {

    private final PurchaseThrottle throttle;
    private final IdempotencyKeys keys;
    private final AutoPilot autoPilot;
    private final SaleCatalogue sales;
    private final Replays replays;
    private final PurchasePaths paths;
    private final Reservations reservations;

    Purchases(
            PurchaseThrottle throttle,
            IdempotencyKeys keys,
            AutoPilot autoPilot,
            SaleCatalogue sales,
            Replays replays,
            PurchasePaths paths,
            Reservations reservations) {
        this.throttle = throttle;
        this.keys = keys;
        this.autoPilot = autoPilot;
        this.sales = sales;
        this.replays = replays;
        this.paths = paths;
        this.reservations = reservations;
    }

    /**
     * The throttle counts every attempt first (a refusal known from memory was answered before: see
     * {@link KnownRefusals}), even one for a sale that does not exist (an unknown sale is not cached:
     * looking it up asks Postgres); an Idempotency-Key is bound in the same round trip. On one Redis master,
     * for a sale this instance has looked up, the reserve call of the path's batch counts and binds instead:
     * the purchase makes no Redis call of its own.
     */
    PurchaseOutcome purchase(
            long saleId, String userId, int quantity, @Nullable String idempotencyKey, Preference preference) {
        long arrived = System.nanoTime();
        if (throttle.countsInReserve() && sales.isLoaded(saleId)) {
            throttle.refuseIfSpent(userId);
            PurchaseAttempt attempt =
                    new PurchaseAttempt(saleId, userId, quantity, idempotencyKey, preference, arrived);
            autoPilot.arrived();
            Sale sale = checked(attempt);
            IdempotencyKeys.Binding fresh = idempotencyKey == null ? null : keys.fresh(saleId, quantity);
            return reserveAndTake(attempt, fresh, fresh != null, sale, true, true);
        }
        IdempotencyKeys.Binding binding = null;
        boolean redisDown = false;
        if (idempotencyKey == null) {
            throttle.admit(userId);
        } else {
            try {
                binding = keys.bind(userId, idempotencyKey, saleId, quantity);
            } catch (ApiProblem refusedOrReused) {
                throw refusedOrReused;
            } catch (RuntimeException e) {
                redisDown = true;
            }
        }
        // After the throttle: an attempt it refused (429) is no part of the crowd the paths carry.
        autoPilot.arrived();
        PurchaseAttempt attempt = new PurchaseAttempt(saleId, userId, quantity, idempotencyKey, preference, arrived);
        if (binding == null) {
            Sale sale = checked(attempt);
            if (redisDown) {
                return replays.withoutRedis(userId, Objects.requireNonNull(idempotencyKey), saleId, quantity);
            }
            return reserveAndTake(attempt, null, false, sale, true, false);
        }
        return purchase(attempt, binding, true);
    }

    /** A purchase with its key bound; {@code mayRebind}: a key whose order was given back may make a new one. */
    private PurchaseOutcome purchase(PurchaseAttempt attempt, IdempotencyKeys.Binding binding, boolean mayRebind) {
        Sale sale;
        try {
            sale = checked(attempt);
        } catch (ApiProblem invalid) {
            if (!binding.replay()) { // bound with the attempt's count, before the sale was looked at: unbind
                keys.forget(attempt.userId(), Objects.requireNonNull(attempt.idempotencyKey()), binding);
            }
            throw invalid;
        }
        if (binding.replay()) {
            Optional<Replays.Answer> original = replays.original(attempt, binding, mayRebind);
            if (original.isPresent()) {
                return answered(original.get(), attempt);
            }
        }
        return reserveAndTake(attempt, binding, !binding.replay(), sale, mayRebind, false);
    }

    /**
     * Takes the order on its path under the key's order id (a fresh one without a key): the path's batch
     * reserves it in Redis, and what Redis did not reserve (a refusal, a replay, units held by others) or
     * held back (ASYNC: a fresh key whose shopper holds units) comes back here. {@code admit}: the reserve
     * call counts the attempt and binds the fresh key, which it may find spent (429) or bound before (a
     * replay).
     */
    private PurchaseOutcome reserveAndTake(
            PurchaseAttempt attempt,
            IdempotencyKeys.@Nullable Binding binding,
            boolean freshKey,
            Sale sale,
            boolean mayRebind,
            boolean admit) {
        UUID orderId = binding == null ? OrderIds.next(attempt.saleId()) : binding.orderId();
        OrderRequested order = reservations.order(attempt, orderId, binding == null ? null : binding.fingerprint());
        IdempotencyKeys.Binding freshBinding = freshKey ? binding : null;
        PurchasePath mode = paths.choose(attempt.preference());
        Reservations.Reserved reserved;
        switch (taken(
                order,
                attempt,
                freshBinding,
                () -> paths.take(mode, order, attempt.preference(), attempt.arrived(), false, admit))) {
            case PathEnd.Answered answered -> {
                return answered.outcome();
            }
            case NotTaken.NotReserved(ReserveResult.Throttled throttled) ->
                throw throttle.spent(attempt.userId(), throttled.waitMillis());
            case NotTaken.NotReserved(ReserveResult.Bound bound) -> {
                IdempotencyKeys.Binding original = IdempotencyKeys.found(
                        bound.binding(), Objects.requireNonNull(binding).fingerprint());
                return purchase(attempt, original, true);
            }
            case NotTaken.NotReserved notReserved ->
                reserved = reservations.decided(attempt, order, freshKey, mode, sale, notReserved.result());
            case NotTaken.HeldBack heldBack ->
                reserved = reservations.decided(attempt, order, freshKey, mode, sale, heldBack.reserved());
            case NotTaken.ReserveFailed failed -> {
                if (admit && attempt.idempotencyKey() != null) { // the key was not bound: Postgres may hold its order
                    return replays.withoutRedis(
                            attempt.userId(), attempt.idempotencyKey(), attempt.saleId(), attempt.quantity());
                }
                throw reservations.unchecked();
            }
        }
        return switch (reserved) {
            case Reservations.Reserved.Taken taken -> { // held back by an ASYNC batch: reserved, not yet published
                if (freshKey && taken.heldBefore() > 0) {
                    Optional<PurchaseOutcome> original =
                            replays.lostBinding(attempt, Objects.requireNonNull(binding), taken.order());
                    if (original.isPresent()) {
                        yield original.get();
                    }
                }
                PathEnd end = taken(
                        taken.order(),
                        attempt,
                        freshBinding,
                        () -> paths.take(mode, taken.order(), attempt.preference(), attempt.arrived(), true, false));
                // A reserved order is published without a reserve call: no refusal, no failed call comes back.
                if (!(end instanceof PathEnd.Answered answered)) {
                    throw new IllegalStateException("a reserved order came back from its path as " + end);
                }
                yield answered.outcome();
            }
            case Reservations.Reserved.Refused refused -> {
                if (freshKey && refused.heldBefore() > 0) {
                    Optional<PurchaseOutcome> original =
                            replays.lostBinding(attempt, Objects.requireNonNull(binding), null);
                    if (original.isPresent()) {
                        yield original.get();
                    }
                }
                throw refused.refusal();
            }
            case Reservations.Reserved.Original original -> {
                Replays.Answer answer = replays.replay(
                        original.order(),
                        Objects.requireNonNull(binding),
                        original.existing().state(),
                        original.existing().mode(),
                        original.existing().code(),
                        mayRebind);
                yield answered(answer, attempt);
            }
        };
    }

    /**
     * The order taken on its path. {@code freshBinding}: the key this attempt bound afresh. Postgres refusing
     * the order because an order exists under that key means Redis lost the key's binding and the shopper's
     * units with it: that order is the answer. A SYNC order with such a key is not checked before it is
     * written, as an ASYNC one is before it is published: Postgres's one order per key refuses it.
     */
    private PathEnd taken(
            OrderRequested order,
            PurchaseAttempt attempt,
            IdempotencyKeys.@Nullable Binding freshBinding,
            Supplier<PathEnd> path) {
        try {
            return path.get();
        } catch (ApiProblem problem) {
            if (problem.code() == ProblemCode.UNAVAILABLE) { // nothing was taken: the key may be used again
                keys.forget(order);
            }
            if (freshBinding != null && problem.code() == ProblemCode.IDEMPOTENCY_KEY_REUSED) {
                Optional<PurchaseOutcome> original = replays.lostBinding(attempt, freshBinding, null);
                if (original.isPresent()) {
                    return new PathEnd.Answered(original.get());
                }
            }
            throw problem;
        }
    }

    /** A replay's answer, or the purchase taken as new under the fresh order its key was bound to. */
    private PurchaseOutcome answered(Replays.Answer answer, PurchaseAttempt attempt) {
        return switch (answer) {
            case Replays.Answer.Given given -> given.outcome();
            case Replays.Answer.Rebound rebound -> purchase(attempt, rebound.binding(), false);
        };
    }

    /** The sale (404 if unknown), once the quantity is within its per-user limit (else 400). */
    private Sale checked(PurchaseAttempt attempt) {
        Sale sale = sales.get(attempt.saleId());
        if (attempt.quantity() > sale.perUserLimit()) {
            throw new ApiProblem(
                    ProblemCode.VALIDATION_FAILED,
                    "quantity must be at most the sale's per-user limit of " + sale.perUserLimit() + ".");
        }
        return sale;
    }
}
