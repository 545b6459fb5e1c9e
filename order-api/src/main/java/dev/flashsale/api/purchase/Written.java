package dev.flashsale.api.purchase;

/**
 * What the SYNC batch made of one order: Redis's reserve ({@link NotTaken} when it went no further), then the
 * database's write.
 */
sealed interface Written
        permits Written.Confirmed,
                Written.Refused,
                Written.Failed,
                Written.Unknown,
                NotTaken.NotReserved,
                NotTaken.ReserveFailed {

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
