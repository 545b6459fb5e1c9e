package dev.flashsale.api.sale;

public enum SaleState {
    UPCOMING,
    ACTIVE,
    SOLD_OUT,
    ENDED,
    /** Its Redis state was lost and is being rebuilt from Postgres: purchases get 503 until then. */
    REBUILDING
}
