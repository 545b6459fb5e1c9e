package dev.flashsale.api.door;

import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.door.*: how many purchases one API instance works on at once.
 *
 * @param enabled whether purchases pass the door at all (off: unbounded, as before; for drills only)
 * @param algorithm {@code standing-queue} lowers the limit while most purchases of an interval take
 *     longer than {@code target} (see {@link MedianLimit}); {@code fixed} holds it at {@code max-limit}
 * @param target the latency above which the median purchase of an interval means a standing queue
 * @param interval how often the limit is reconsidered
 * @param minLimit the adaptive limit never drops below this (a burst of this many always gets in)
 * @param maxLimit the most purchases in progress at once; beyond it every purchase is refused
 * @param retryAfter Retry-After on a refusal
 */
@Validated
@ConfigurationProperties("app.door")
public record DoorProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("standing-queue") Algorithm algorithm,
        @DefaultValue("20ms") Duration target,
        @DefaultValue("100ms") Duration interval,
        @DefaultValue("32") @Min(1) int minLimit,
        @DefaultValue("1024") @Min(1) int maxLimit,
        @DefaultValue("1s") Duration retryAfter) {

    public enum Algorithm {
        STANDING_QUEUE,
        FIXED
    }
}
