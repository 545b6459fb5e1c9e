package dev.flashsale.api.purchase;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.api.sale.RebuildWatch;
import dev.flashsale.api.sale.Sale;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReserveResult;
import java.time.Clock;
import java.time.Instant;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * What the reserve script decided for a purchase, which its path's batch reserved in Redis (the only place stock
 * is decided during a sale: {@link BatchReserves}), as an answer: sold out, over the shopper's limit, not open,
 * the sale's state missing, or the order its Idempotency-Key made before.
 */
@Component
class Reservations {

    private final KnownRefusals known;
    private final RebuildWatch rebuilds;
    private final IdempotencyKeys keys;
    private final PurchaseCounts counts;
    private final PurchaseProperties properties;
    private final Clock clock;

    Reservations(
            KnownRefusals known,
            RebuildWatch rebuilds,
            IdempotencyKeys keys,
            PurchaseCounts counts,
            PurchaseProperties properties,
            Clock clock) {
        this.known = known;
        this.rebuilds = rebuilds;
        this.keys = keys;
        this.counts = counts;
        this.properties = properties;
        this.clock = clock;
    }

    /**
     * What a reserve made: units held for a new order, a refusal, or the order its Idempotency-Key made
     * before. {@code heldBefore}: the units the shopper held in the sale already (with a fresh key, its
     * binding may have been lost while its order exists).
     */
    sealed interface Reserved {
        /** Units taken in Redis: the order goes to its path. */
        record Taken(OrderRequested order, long heldBefore) implements Reserved {}

        /** Refused by what the sale holds (sold out, over the shopper's limit, not open): nothing held. */
        record Refused(ApiProblem refusal, long heldBefore) implements Reserved {}

        /** The key's order exists already (another request with the key reserved it): a replay. */
        record Original(OrderRequested order, ReserveResult.Existing existing) implements Reserved {}
    }

    /** The attempt as an order under {@code orderId}, requested now. */
    OrderRequested order(PurchaseAttempt attempt, UUID orderId, @Nullable String fingerprint) {
        return new OrderRequested(
                orderId,
                attempt.saleId(),
                attempt.userId(),
                attempt.quantity(),
                clock.instant(),
                attempt.idempotencyKey(),
                fingerprint);
    }

    /** 503 for a purchase whose reserve call failed: Redis may or may not have run it. */
    ApiProblem unchecked() {
        return ApiProblem.unavailable(
                "Stock cannot be checked right now; nothing was reserved.", properties.unavailableRetryAfter());
    }

    /**
     * What the reserve script decided for the order: a refusal by the sale comes back as its problem, one of
     * Redis as a thrown one. {@code freshKey}: the attempt bound its Idempotency-Key, which is unbound again
     * if nothing was reserved or remembered.
     */
    Reserved decided(
            PurchaseAttempt attempt,
            OrderRequested order,
            boolean freshKey,
            PurchasePath mode,
            Sale sale,
            ReserveResult reserved) {
        long saleId = attempt.saleId();
        Instant now = order.requestedAt();
        return switch (reserved) {
            // Held back by its batch, whose reserve taught the sold-out memory the units left already.
            case ReserveResult.Reserved r -> new Reserved.Taken(order, r.heldBefore());
            case ReserveResult.Refused refused -> {
                ProblemCode refusal = ProblemCode.refusal(refused.code());
                if (refusal == ProblemCode.SOLD_OUT) {
                    known.refusedSoldOut(saleId, attempt.quantity());
                }
                counts.count(mode, refused.code());
                yield new Reserved.Refused(ApiProblem.refused(refusal), refused.heldBefore());
            }
            case ReserveResult.Unavailable lost -> {
                if (freshKey) {
                    // Nothing was reserved: the key is free again, and the rebuild may bind it to an order
                    // Postgres already holds under it (an answer lost with Redis).
                    keys.forget(order);
                }
                if (lost.missing()) {
                    if (!now.isBefore(sale.endsAt())) {
                        // Ended: there is nothing to rebuild and nothing to wait for.
                        counts.count(mode, ProblemCode.SALE_NOT_ACTIVE.code());
                        throw ApiProblem.refused(ProblemCode.SALE_NOT_ACTIVE);
                    }
                    rebuilds.request(saleId, "a purchase found its Redis state missing");
                }
                counts.count(mode, ProblemCode.SALE_REBUILDING.code());
                throw new ApiProblem(
                        ProblemCode.SALE_REBUILDING,
                        "The sale's stock is being rebuilt; nothing was reserved. Retry shortly.",
                        rebuilds.properties().retryAfter());
            }
            case ReserveResult.HeldByOthers heldByOthers -> {
                if (freshKey) {
                    keys.forget(order); // nothing was reserved or remembered: the key is free again
                }
                counts.count(mode, ProblemCode.UNITS_HELD.code());
                throw new ApiProblem(
                        ProblemCode.UNITS_HELD,
                        "No unit is left, but orders still being written hold some that may come back; nothing was"
                                + " reserved. Ask again after Retry-After.",
                        properties.unavailableRetryAfter());
            }
            case ReserveResult.Existing existing -> new Reserved.Original(order, existing);
            // Answers to the attempt's admission, which the purchase reads before its reservation.
            case ReserveResult.Throttled _, ReserveResult.Bound _ ->
                throw new IllegalStateException("not a reservation's answer: " + reserved);
        };
    }
}
