package dev.flashsale.api.mode;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.mode.auto.*: AUTO's signals and thresholds. Pressure is the largest of the signals, each divided by
 * its limit, so 1.0 means "one signal is at its limit".
 *
 * @param sampleInterval how often the controller samples
 * @param latencyLimit sync p99 at which the sync path counts as saturated
 * @param errorRateLimit sync failure rate (percent) at which it counts as saturated
 * @param poolWaitersLimit threads waiting for a database connection at which it counts as saturated
 * @param high pressure at or above which a sample counts towards ASYNC
 * @param low pressure below which a sample counts towards SYNC
 * @param samplesToAsync consecutive high samples that switch to ASYNC
 * @param samplesToSync consecutive low samples that switch back to SYNC (a longer dwell)
 * @param minTimeBetweenSwitches no switch follows another sooner than this
 * @param minAsyncRate floor for the arrival rate AUTO compares against while in ASYNC (requests/s)
 */
@ConfigurationProperties("app.mode.auto")
public record AutoModeProperties(
        @DefaultValue("200ms") Duration sampleInterval,
        @DefaultValue("50ms") Duration latencyLimit,
        @DefaultValue("20") double errorRateLimit,
        @DefaultValue("2") int poolWaitersLimit,
        @DefaultValue("1.0") double high,
        @DefaultValue("0.5") double low,
        @DefaultValue("3") int samplesToAsync,
        @DefaultValue("25") int samplesToSync,
        @DefaultValue("5s") Duration minTimeBetweenSwitches,
        @DefaultValue("50") double minAsyncRate) {}
