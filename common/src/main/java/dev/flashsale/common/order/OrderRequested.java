package dev.flashsale.common.order;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Function;
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

    /**
     * These items (orders, or what carries them) by the sale of their order, each sale's in the order they
     * come: one script call per sale serves a batch.
     */
    public static <T> Map<Long, List<T>> bySale(List<T> items, Function<? super T, OrderRequested> orderOf) {
        return items.stream()
                .collect(Collectors.groupingBy(
                        item -> orderOf.apply(item).saleId(), LinkedHashMap::new, Collectors.toList()));
    }

    /** The ids of these orders, in the order they come. */
    public static List<UUID> ids(List<OrderRequested> orders) {
        return orders.stream().map(OrderRequested::orderId).toList();
    }
}
