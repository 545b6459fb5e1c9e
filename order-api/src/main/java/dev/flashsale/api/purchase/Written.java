package dev.flashsale.api.purchase;

import dev.flashsale.common.stock.ReserveResult;

/** What the SYNC batch made of one order: Redis's reserve, then the database's write. */
sealed interface Written {
    /** Not reserved, so not written: what the reserve script decided instead (a refusal, a replay, ...). */
    record NotReserved(ReserveResult result) implements Written {}

    /**
     * Its sale's reserve call failed (Redis unreachable, or no answer in time): nothing is released here, which
     * would wait on Redis once more, and the Idempotency-Key stays bound. A call that ran all the same left a
     * WRITING record, which the reconciler settles from Postgres after its grace.
     */
    record ReserveFailed() implements Written {}

    record Confirmed() implements Written {}

    record Refused(String code) implements Written {}

    /** Not written: the database failed or refused the call; nothing was taken. */
    record Failed() implements Written {}

    /**
     * Not known: the commit's outcome was lost and Postgres could not be asked. The reservation stays
     * WRITING until a replay or the reconciler finds the truth in Postgres.
     */
    record Unknown() implements Written {}
}
