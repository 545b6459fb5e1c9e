package dev.flashsale.api.purchase;

import dev.flashsale.common.stock.ReserveResult;

/** What the SYNC batch made of one order: Redis's reserve, then the database's write. */
sealed interface Written {
    /** Not reserved, so not written: what the reserve script decided instead (a refusal, a replay, ...). */
    record NotReserved(ReserveResult result) implements Written {}

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
