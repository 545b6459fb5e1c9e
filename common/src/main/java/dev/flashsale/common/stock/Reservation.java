package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchaseMode;
import java.time.Instant;
import java.util.UUID;

/** A reservation record as Redis holds it. */
public record Reservation(
        long saleId,
        UUID orderId,
        String userId,
        int quantity,
        ReservationState state,
        PurchaseMode mode,
        Instant createdAt,
        String code) {}
