package dev.flashsale.api.sale;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** The body of POST /api/v1/sales. */
record NewSale(
        @NotBlank @Size(max = 64) @Nullable String sku,
        @NotBlank @Size(max = 200) @Nullable String name,
        @NotNull @Min(0) @Nullable Long priceCents,
        @NotNull @Min(0) @Max(10_000_000) @Nullable Integer stock,
        @NotNull @Min(1) @Max(1_000) @Nullable Integer perUserLimit,
        @NotNull @Nullable Instant startsAt,
        @NotNull @Nullable Instant endsAt) {

    @AssertTrue(message = "endsAt must be after startsAt")
    boolean isEndsAtAfterStartsAt() {
        return startsAt == null || endsAt == null || endsAt.isAfter(startsAt);
    }
}
