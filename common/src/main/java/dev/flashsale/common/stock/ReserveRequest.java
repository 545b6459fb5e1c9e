package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * One order's ask of the reserve script: {@code quantity} units for {@code userId} under {@code orderId}, on
 * {@code mode}'s path, at {@code now} (the API's clock: the sale's window and the order's date). With
 * {@code rememberRefusal}, a refusal is recorded under the order id so that a replay of the same
 * Idempotency-Key gets the same answer. {@code state}: what the reservation is recorded as, RESERVED, or
 * WRITING for a SYNC order reserved by the batch that writes it to Postgres at once.
 */
public record ReserveRequest(
        UUID orderId,
        String userId,
        int quantity,
        PurchasePath mode,
        Instant now,
        boolean rememberRefusal,
        ReservationState state) {

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
        this(orderId, userId, quantity, mode, now, rememberRefusal, ReservationState.RESERVED);
    }
}
