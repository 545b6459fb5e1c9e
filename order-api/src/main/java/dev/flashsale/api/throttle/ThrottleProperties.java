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
 */
@Validated
@ConfigurationProperties("app.throttle")
public record ThrottleProperties(
        @DefaultValue("10") @Min(1) int purchases,
        @DefaultValue("1s") Duration window) {}
