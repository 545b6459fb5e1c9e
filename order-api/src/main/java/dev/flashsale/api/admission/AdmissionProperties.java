package dev.flashsale.api.admission;

import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.admission.*: how many purchases one API instance works on at once.
 *
 * @param enabled whether purchases pass the door at all (off: unbounded, as before; for drills only)
 * @param algorithm {@code gradient2} adapts the limit to measured latency (Netflix concurrency-limits'
 *     Gradient2: the limit shrinks while latency rises above its long-term average); {@code fixed} holds
 *     it at {@code max-limit}
 * @param initialLimit the adaptive limit's starting point
 * @param minLimit the adaptive limit never drops below this
 * @param maxLimit the most purchases in progress at once; beyond it every purchase is refused
 * @param retryAfter Retry-After on a refusal
 */
@Validated
@ConfigurationProperties("app.admission")
public record AdmissionProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("gradient2") Algorithm algorithm,
        @DefaultValue("64") @Min(1) int initialLimit,
        @DefaultValue("16") @Min(1) int minLimit,
        @DefaultValue("256") @Min(1) int maxLimit,
        @DefaultValue("1s") Duration retryAfter) {

    public enum Algorithm {
        GRADIENT2,
        FIXED
    }
}
