package dev.flashsale.api.purchase;

import dev.flashsale.api.status.OrderView;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/** The answer to a purchase: 201 with a final order, or 202 with a QUEUED one; which preference applied. */
record PurchaseOutcome(
        OrderView order, HttpStatus status, @Nullable String preferenceApplied) {

    PurchaseOutcome applying(@Nullable String preference) {
        return new PurchaseOutcome(order, status, preference);
    }
}
