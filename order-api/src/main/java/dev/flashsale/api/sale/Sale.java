package dev.flashsale.api.sale;

import java.time.Instant;

/** A flash sale: a quantity of one SKU, sold between two instants, with a per-user limit. */
public record Sale(
        long id,
        String sku,
        String name,
        long priceCents,
        int totalStock,
        int perUserLimit,
        Instant startsAt,
        Instant endsAt,
        Instant createdAt) {

    public SaleState stateAt(Instant now, long remaining) {
        if (now.isBefore(startsAt)) {
            return SaleState.UPCOMING;
        }
        if (!now.isBefore(endsAt)) {
            return SaleState.ENDED;
        }
        return remaining > 0 ? SaleState.ACTIVE : SaleState.SOLD_OUT;
    }
}
