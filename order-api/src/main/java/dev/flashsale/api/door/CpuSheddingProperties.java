package dev.flashsale.api.door;

import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.door.cpu.*: the door's second bound, on the CPU this instance runs on (see {@link CpuShedding}).
 *
 * @param enabled whether purchases are shed while the CPU is saturated
 * @param high above this CPU load (0..1, the container's share when it has a limit, else the machine's)
 *     the share of purchases let in is cut
 * @param low below this load the share grows back
 * @param interval how often the load is read and the share reconsidered
 * @param decrease the share is multiplied by this while the load is above {@code high}
 * @param increase the share grows by this much per interval while the load is below {@code low}
 * @param minShare the share never drops below this (some purchases always get in, to measure)
 */
@Validated
@ConfigurationProperties("app.door.cpu")
public record CpuSheddingProperties(
        @DefaultValue("false") boolean enabled,

        @DefaultValue("0.9") @DecimalMin("0.1") @DecimalMax("1.0")
        double high,

        @DefaultValue("0.8") @DecimalMin("0.0") @DecimalMax("1.0")
        double low,

        @DefaultValue("200ms") Duration interval,

        @DefaultValue("0.75") @DecimalMin("0.1") @DecimalMax("0.99")
        double decrease,

        @DefaultValue("0.05") @DecimalMin("0.001") @DecimalMax("1.0")
        double increase,

        @DefaultValue("0.05") @DecimalMin("0.0") @DecimalMax("1.0")
        double minShare) {}
