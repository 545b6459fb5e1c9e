package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.UUID;

/** A reservation record as Redis holds it. */
public record Reservation(
        long saleId,
        UUID orderId,
        String userId,
        int quantity,
        ReservationState state,
        PurchasePath mode,
        Instant createdAt,
        String code) {}
