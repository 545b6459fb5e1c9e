package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One order's ask of the reserve script: {@code quantity} units for {@code userId} under {@code orderId}, on
 * {@code mode}'s path, at {@code now} (the API's clock: the sale's window and the order's date). With
 * {@code rememberRefusal}, a refusal is recorded under the order id so that a replay of the same
 * Idempotency-Key gets the same answer. {@code state}: what the reservation is recorded as, RESERVED, or
 * WRITING for a SYNC order reserved by the batch that writes it to Postgres at once. {@code admission}: the
 * shopper's attempt to count and Idempotency-Key to bind in the same call, before the order is decided, or
 * null when that was done before.
 */
public record ReserveRequest(
        UUID orderId,
        String userId,
        int quantity,
        PurchasePath mode,
        Instant now,
        boolean rememberRefusal,
        ReservationState state,
        @Nullable Admission admission) {

    /**
     * The purchase throttle's count of a shopper's attempt ({@code counterKey}: at most {@code limit} per
     * {@code windowMillis}) and, with {@code bindingKey}, the Idempotency-Key's binding to {@code binding} for
     * {@code bindingTtlMillis}, made by the reserve call (shared.lua's Admission). Those keys are on the
     * shopper's slot, not the sale's: only one Redis master takes them in one call.
     */
    public record Admission(
            String counterKey,
            long windowMillis,
            int limit,
            @Nullable String bindingKey,
            @Nullable String binding,
            long bindingTtlMillis) {

        public Admission {
            Objects.requireNonNull(counterKey, "counterKey");
            if ((bindingKey == null) != (binding == null)) {
                throw new IllegalArgumentException("a binding needs both its key and its value");
            }
        }
    }

    public ReserveRequest {
        Objects.requireNonNull(orderId, "orderId");
        Objects.requireNonNull(userId, "userId");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(now, "now");
        if (state != ReservationState.RESERVED && state != ReservationState.WRITING) {
            throw new IllegalArgumentException("a reservation begins RESERVED or WRITING, not " + state);
        }
    }

    /** An ask recorded as RESERVED. */
    public ReserveRequest(
            UUID orderId, String userId, int quantity, PurchasePath mode, Instant now, boolean rememberRefusal) {
        this(orderId, userId, quantity, mode, now, rememberRefusal, ReservationState.RESERVED, null);
    }
}
