package dev.flashsale.common.stock;

import java.util.List;
import java.util.UUID;

/**
 * Redis keys of one sale. They share the hash tag {@code {sale:ID}} so that every script touching them
 * runs unchanged on Redis Cluster (all keys of a script in one slot).
 */
record SaleKeys(long saleId) {

    String sale() {
        return "{sale:" + saleId + "}";
    }

    String users() {
        return sale() + ":users";
    }

    String order(UUID orderId) {
        return orderPrefix() + orderId;
    }

    String orderPrefix() {
        return sale() + ":order:";
    }

    /**
     * The pending set: orders whose reservations still hold stock, scored by when they were reserved, or
     * last claimed (Redis's TIME).
     */
    String pending() {
        return sale() + ":pending";
    }

    /** The sale's line: the places handed out and the front of those served (see {@link SaleLines}). */
    String line() {
        return sale() + ":line";
    }

    /** The line's places by shopper, so that an attempt whose answer was lost gets its place back. */
    String lineShoppers() {
        return line() + ":shoppers";
    }

    List<String> forReservation(UUID orderId) {
        return List.of(sale(), users(), order(orderId), pending());
    }

    /** Maps an order id to its sale, for status reads of orders not yet in Postgres. */
    static String orderIndex(UUID orderId) {
        return "order:" + orderId;
    }
}
