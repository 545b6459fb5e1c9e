package dev.flashsale.api.sale;

public enum SaleState {
    UPCOMING,
    ACTIVE,
    SOLD_OUT,
    ENDED
}
