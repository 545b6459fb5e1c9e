package dev.flashsale.common.order;

import java.util.List;
import java.util.Objects;

/**
 * Version 2 of the message contract: several {@link OrderRequested} in one AMQP message, published by one
 * API instance under one publisher confirm (group commit). Every order in it has its own reservation and
 * is written, refused or failed on its own; the message is acked once all of them are settled.
 */
public record OrderBatch(List<OrderRequested> orders) {

    public OrderBatch {
        Objects.requireNonNull(orders, "orders");
        if (orders.isEmpty()) {
            throw new IllegalArgumentException("an OrderBatch carries at least one order");
        }
        orders = List.copyOf(orders);
    }
}
