package dev.flashsale.api.admission;

import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.admission.line.*: the line at a full door, for sales with few units (see {@link WaitingLine}).
 *
 * @param enabled whether a full door lets purchases wait in line at all (off: 503 at once, as before)
 * @param maxWait the longest a purchase waits in line before it is refused (503, nothing reserved)
 * @param maxUnits purchases wait only for a sale with at most this many units left: its line ends when it
 *     sells out, while a sale with stock for hours would keep a line of the whole overload
 * @param maxWaiting the most purchases in line at once in this instance (and never more than the sale has
 *     units left: one behind them would get a unit only if one of them failed); beyond it, 503 at once.
 *     Each waits with its connection and buffers: 4,000 of them take about 100 MB
 */
@Validated
@ConfigurationProperties("app.admission.line")
public record WaitingLineProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("3s") Duration maxWait,
        @DefaultValue("10000") @Min(0) long maxUnits,
        @DefaultValue("4000") @Min(0) int maxWaiting) {}
