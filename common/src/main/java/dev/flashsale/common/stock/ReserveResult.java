package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;

/** What the reserve script decided. */
public sealed interface ReserveResult {

    /**
     * Stock is held for the order. {@code heldBefore}: the units its user held in the sale before it (with a
     * fresh Idempotency-Key, a sign that the key's binding may have been lost while its order exists).
     */
    record Reserved(long remaining, long heldBefore) implements ReserveResult {}

    /**
     * Nothing was held: SALE_NOT_ACTIVE, SOLD_OUT or PURCHASE_LIMIT_REACHED. {@code heldBefore}: the units
     * its user holds in the sale.
     */
    record Refused(String code, long heldBefore) implements ReserveResult {}

    /**
     * Nothing was held and nothing remembered: the sale's state is MISSING from Redis (lost; it must be
     * rebuilt from Postgres) or REBUILDING. The purchase may be retried shortly.
     */
    record Unavailable(String reason) implements ReserveResult {

        public boolean missing() {
            return "MISSING".equals(reason);
        }
    }

    /**
     * Nothing was held and nothing remembered: fewer units are left than asked for, but reservations still
     * hold enough that they may come back (a failed commit or publish gives its units back). SOLD_OUT is
     * final to a shopper, so it waits until no held unit can come back.
     */
    record HeldByOthers() implements ReserveResult {}

    /** The order id was seen before (a replay): nothing changed; this is where the original stands. */
    record Existing(ReservationState state, PurchasePath mode, String code) implements ReserveResult {}

    /**
     * Nothing was held, nothing bound: the call counted the shopper's attempt ({@link ReserveRequest.Admission})
     * and the shopper's window is spent for {@code waitMillis} more.
     */
    record Throttled(long waitMillis) implements ReserveResult {}

    /**
     * Nothing was held: the call counted the attempt, and its Idempotency-Key was bound before, to
     * {@code binding} (a replay, or a key used for another purchase).
     */
    record Bound(String binding) implements ReserveResult {}
}
