package dev.flashsale.api.mode;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.mode.auto.*: AUTO's signals and thresholds. AUTO compares what it measures of both paths: the p95
 * of the time each path adds after the reservation (SYNC: the commit; ASYNC: publish, confirm, hand-over),
 * kept fresh for the path not chosen by probes. Pressure is the largest of the signals, each divided by
 * its limit, so 1.0 means "one signal is at its limit".
 *
 * @param sampleInterval how often the controller samples
 * @param switchRatio SYNC counts as saturated when its p95 is this many times ASYNC's
 * @param returnRatio back in ASYNC, SYNC's probed p95 must be within this many times ASYNC's to return
 * @param latencyFloor latencies below this count as this much: at idle both paths are "fast", and SYNC
 *     (a final answer at once) is preferred
 * @param probeInterval under AUTO, one purchase per this interval takes the path not chosen, so that both paths'
 *     latencies stay measured (zero: never probe). Time-based, so that probes stay a small share of the
 *     traffic: a slow path's probes alone set AUTO's p99 at 5 % (every 20th purchase), and at 1 % (one a
 *     second at 100/s, seeds drill); one per 5 s is 0.2 % there
 * @param errorRateLimit sync failure rate (percent) at which it counts as saturated
 * @param poolWaitersLimit threads waiting for a database connection at which it counts as saturated
 * @param high pressure at or above which a sample counts towards ASYNC
 * @param low pressure below which a sample counts towards SYNC
 * @param samplesToAsync consecutive high samples that switch to ASYNC
 * @param samplesToSync consecutive low samples that switch back to SYNC (a longer dwell)
 * @param minTimeBetweenSwitches no switch follows another sooner than this
 * @param minAsyncRate floor for the arrival rate AUTO compares against while in ASYNC (requests/s)
 * @param evidenceTtl how long a path's last measured p95 stands once it takes no purchases (a lull, or a
 *     forced mode running the other path), and how far back engagement looks for each path's lowest p95;
 *     beyond it, that path is unmeasured again
 * @param lessonTtl how long AUTO trusts that ASYNC, tried under a crowd, answered no faster than SYNC: until
 *     then latency moves it to ASYNC again only when SYNC's answers are {@code switchRatio} times what
 *     ASYNC's were then. Beyond it ASYNC is tried again (for a few seconds) when SYNC is the slower
 * @param trialShare before a crowd moves to ASYNC on latency alone, this share of its purchases takes ASYNC
 *     for a few seconds, so that both paths' whole answers are measured under the same crowd at once; only
 *     SYNC's answers {@code switchRatio} times ASYNC's move the rest (zero: no trial, latency moves the crowd at once). A bulkhead,
 *     pool or breaker at its limit moves it at once either way
 */
@ConfigurationProperties("app.mode.auto")
public record AutoModeProperties(
        @DefaultValue("200ms") Duration sampleInterval,
        @DefaultValue("1.5") double switchRatio,
        @DefaultValue("1.2") double returnRatio,
        @DefaultValue("10ms") Duration latencyFloor,
        @DefaultValue("5s") Duration probeInterval,
        @DefaultValue("20") double errorRateLimit,
        @DefaultValue("2") int poolWaitersLimit,
        @DefaultValue("1.0") double high,
        @DefaultValue("0.5") double low,
        @DefaultValue("3") int samplesToAsync,
        @DefaultValue("25") int samplesToSync,
        @DefaultValue("5s") Duration minTimeBetweenSwitches,
        @DefaultValue("50") double minAsyncRate,
        @DefaultValue("60s") Duration evidenceTtl,
        @DefaultValue("5m") Duration lessonTtl,
        @DefaultValue("0.25") double trialShare) {}
