package dev.flashsale.common.order;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The message contract between order-api and order-worker: stock for this order is reserved in Redis
 * and the order must be written to Postgres. Published persistent, with publisher confirms.
 */
public record OrderRequested(
        UUID orderId,
        long saleId,
        String userId,
        int quantity,
        Instant requestedAt,
        @Nullable String idempotencyKey,
        @Nullable String fingerprint) {

    public OrderRequested {
        Objects.requireNonNull(orderId, "orderId");
        Objects.requireNonNull(userId, "userId");
        Objects.requireNonNull(requestedAt, "requestedAt");
        if (saleId <= 0 || quantity < 1 || userId.isBlank()) {
            throw new IllegalArgumentException("saleId, quantity and userId must be set");
        }
        if ((idempotencyKey == null) != (fingerprint == null)) {
            throw new IllegalArgumentException("idempotencyKey and fingerprint go together");
        }
    }

    /** The ids of these orders by sale, in the order they come: one script call per sale serves a batch. */
    public static Map<Long, List<UUID>> bySale(List<OrderRequested> orders) {
        return orders.stream()
                .collect(Collectors.groupingBy(
                        OrderRequested::saleId,
                        LinkedHashMap::new,
                        Collectors.mapping(OrderRequested::orderId, Collectors.toList())));
    }
}
