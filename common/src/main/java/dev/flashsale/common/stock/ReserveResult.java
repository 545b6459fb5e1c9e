package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchaseMode;

/** What the reserve script decided. */
public sealed interface ReserveResult {

    /** Stock is held for the order. */
    record Reserved(long remaining) implements ReserveResult {}

    /** Nothing was held: SALE_NOT_ACTIVE, SOLD_OUT or PURCHASE_LIMIT_REACHED. */
    record Refused(String code) implements ReserveResult {}

    /** The order id was seen before (a replay): nothing changed; this is where the original stands. */
    record Existing(ReservationState state, PurchaseMode mode, String code) implements ReserveResult {}
}
