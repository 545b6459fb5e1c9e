package dev.flashsale.common.order;

import java.time.Instant;
import java.util.UUID;

/** An order as Postgres holds it. */
public record StoredOrder(
        UUID orderId,
        long saleId,
        String userId,
        int quantity,
        OrderStatus status,
        PurchasePath mode,
        Instant createdAt,
        Instant updatedAt,
        String failureCode) {}
