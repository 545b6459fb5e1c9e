package dev.flashsale.api.throttle;

import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.throttle.*
 *
 * @param purchases purchases one shopper may attempt per window, replays and refusals included
 * @param window the length of a window; the counter's TTL in Redis
 * @param inReserve whether a purchase's reserve call counts its attempt and binds its Idempotency-Key (one Redis
 *     master only: on Redis Cluster the attempt is counted in a call of its own whatever this says)
 */
@Validated
@ConfigurationProperties("app.throttle")
public record ThrottleProperties(
        @DefaultValue("10") @Min(1) int purchases,
        @DefaultValue("1s") Duration window,
        @DefaultValue("true") boolean inReserve) {}
