package dev.flashsale.api.purchase;

import dev.flashsale.common.stock.ReserveResult;

/**
 * Why a path's batch took an order no further than Redis: nothing of it was written or published. Each path's
 * batch answers one of these as it is ({@link Written} for SYNC, {@link AsyncPurchase.Taken} for ASYNC), and
 * so does the path's end the purchase reads ({@link PurchasePaths.PathEnd}).
 */
sealed interface NotTaken extends PurchasePaths.PathEnd {

    /** Not reserved: what the reserve script decided instead (a refusal, a replay, units held by others...). */
    record NotReserved(ReserveResult result) implements NotTaken, Written, AsyncPurchase.Taken {}

    /**
     * Reserved, not published (ASYNC): an Idempotency-Key whose shopper holds units, whose binding Redis may
     * have lost. The purchase asks Postgres for the key's order before it is told 202, then takes it again,
     * reserved, or gives it back.
     */
    record HeldBack(ReserveResult.Reserved reserved) implements NotTaken, AsyncPurchase.Taken {}

    /**
     * Its sale's reserve call failed (Redis unreachable, or no answer in time): nothing is released here, which
     * would wait on Redis once more, and the Idempotency-Key stays bound. A SYNC call that ran all the same
     * left a WRITING record, which the reconciler gives back. An ASYNC call ends here only when it provably
     * did not run (an error answered, or never sent); one that got no answer is an unknown publication
     * ({@link AsyncPurchase.Publication#UNKNOWN}): its RESERVED record, if any, is published by the
     * reconciler.
     */
    record ReserveFailed() implements NotTaken, Written, AsyncPurchase.Taken {}
}
