package dev.flashsale.api.mode;

import java.time.Duration;

/**
 * Purchases per second, smoothed exponentially over a time constant whatever the sampling interval. A
 * fixed weight per sample would smooth over a span that shrinks with the interval: at 100 ms and a weight
 * of one half, a trickle of one purchase a second read as a saw between 0 and 5/s. Not thread-safe: the
 * sampler alone calls it.
 */
final class ArrivalRate {

    private final double timeConstantSeconds;
    private long lastTotal;
    private long lastNanos;
    private double perSecond;

    ArrivalRate(Duration timeConstant, long nowNanos) {
        this.timeConstantSeconds = timeConstant.toNanos() / 1e9;
        this.lastNanos = nowNanos;
    }

    /** Takes the running total of arrivals at {@code nowNanos} and answers the smoothed rate. */
    double sample(long total, long nowNanos) {
        double seconds = (nowNanos - lastNanos) / 1e9;
        if (seconds <= 0) {
            return perSecond;
        }
        double instant = (total - lastTotal) / seconds;
        perSecond += (1 - Math.exp(-seconds / timeConstantSeconds)) * (instant - perSecond);
        lastTotal = total;
        lastNanos = nowNanos;
        return perSecond;
    }
}
