package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * One order's ask of the reserve script: {@code quantity} units for {@code userId} under {@code orderId}, on
 * {@code mode}'s path, at {@code now} (the API's clock: the sale's window and the order's date). With
 * {@code rememberRefusal}, a refusal is recorded under the order id so that a replay of the same
 * Idempotency-Key gets the same answer.
 */
public record ReserveRequest(
        UUID orderId, String userId, int quantity, PurchasePath mode, Instant now, boolean rememberRefusal) {

    public ReserveRequest {
        Objects.requireNonNull(orderId, "orderId");
        Objects.requireNonNull(userId, "userId");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(now, "now");
    }
}
