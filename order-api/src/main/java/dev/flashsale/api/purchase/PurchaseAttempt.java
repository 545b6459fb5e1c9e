package dev.flashsale.api.purchase;

import dev.flashsale.api.input.Preference;
import org.jspecify.annotations.Nullable;

/** One purchase request as the shopper sent it, and when it arrived ({@link System#nanoTime()}). */
record PurchaseAttempt(
        long saleId,
        String userId,
        int quantity,
        @Nullable String idempotencyKey,
        Preference preference,
        long arrived) {}
