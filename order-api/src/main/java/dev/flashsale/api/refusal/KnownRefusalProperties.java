package dev.flashsale.api.refusal;

import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.known-refusals.*
 *
 * @param enabled refuse from memory at all (off: every purchase asks Redis, as before)
 * @param refresh how often a sale believed sold out is read again: units that come back (a release, a
 *     rejection, a settlement, a rebuild) are sold again at the latest two refreshes and a round trip later
 * @param maxBuyers the most shoppers with an order in one sale whose names an instance keeps, for a sold-out
 *     sale and for a sale's line alike; beyond it, purchases with an Idempotency-Key ask Redis (one of them
 *     may be a replay)
 */
@Validated
@ConfigurationProperties("app.known-refusals")
public record KnownRefusalProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("150ms") Duration refresh,
        @DefaultValue("100000") @Min(0) int maxBuyers) {}
