package dev.flashsale.api.sale;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** A sale's Redis state was rebuilt from Postgres; {@code keyed} are its orders placed with an Idempotency-Key. */
public record SaleRebuilt(long saleId, List<KeyedOrder> keyed) {

    /** An order and the Idempotency-Key it was placed with, as Postgres holds them. */
    public record KeyedOrder(UUID orderId, String userId, String key, String fingerprint, Instant createdAt) {}
}
