package dev.flashsale.api.sale;

import dev.flashsale.api.input.Moment;
import dev.flashsale.api.input.Printable;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** The body of POST /api/v1/sales: bounded numbers, printable text, instants within {@link Moment}. */
record NewSale(
        @NotBlank @Size(max = 64) @Printable @Nullable String sku,
        @NotBlank @Size(max = 200) @Printable @Nullable String name,
        @NotNull @Min(0) @Max(MAX_PRICE_CENTS) @Nullable Long priceCents,
        @NotNull @Min(0) @Max(10_000_000) @Nullable Integer stock,
        @NotNull @Min(1) @Max(1_000) @Nullable Integer perUserLimit,
        @NotNull @Moment @Nullable Instant startsAt,
        @NotNull @Moment @Nullable Instant endsAt) {

    /** A trillion cents: no storefront price is larger, and any sum of a few of them still fits a long. */
    static final long MAX_PRICE_CENTS = 1_000_000_000_000L;

    @AssertTrue(message = "endsAt must be after startsAt")
    boolean isEndsAtAfterStartsAt() {
        return startsAt == null || endsAt == null || endsAt.isAfter(startsAt);
    }
}
