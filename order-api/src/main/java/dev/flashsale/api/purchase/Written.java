package dev.flashsale.api.purchase;

/** What the database made of one SYNC order. */
sealed interface Written {
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
