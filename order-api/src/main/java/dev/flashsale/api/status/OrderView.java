package dev.flashsale.api.status;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** An order as its shopper sees it; {@code failureCode} only when it is REJECTED or FAILED. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OrderView(
        UUID orderId,
        long saleId,
        int quantity,
        OrderStatus status,
        PurchasePath mode,
        Instant createdAt,
        Instant updatedAt,
        @Nullable String failureCode,
        @JsonIgnore String userId) {}
