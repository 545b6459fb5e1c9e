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

    /**
     * The sale's reservation records: one field per order id, {@code state:mode:code:qty:createdMillis:user}
     * (reserve.lua), so that a batch reads and writes all of its records in one command each.
     */
    String orders() {
        return sale() + ":orders";
    }

    /** Refusals remembered for replays of an Idempotency-Key, as records in {@link #orders}' format. */
    String refusals() {
        return sale() + ":refusals";
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

    List<String> forReservation() {
        return List.of(sale(), users(), orders(), pending());
    }

    /** Maps an order id to its sale, for status reads of orders not yet in Postgres. */
    static String orderIndex(UUID orderId) {
        return "order:" + orderId;
    }
}
