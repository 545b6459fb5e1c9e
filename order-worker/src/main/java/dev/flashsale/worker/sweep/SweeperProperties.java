package dev.flashsale.worker.sweep;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.sweeper.*: settling reservations that were never handed off to a worker.
 *
 * @param grace a reservation still RESERVED this long after it was made is settled
 * @param interval pause between two sweeps (also the delay before the first)
 * @param batchSize most reservations settled per sale and sweep
 * @param saleLookback sales that ended longer ago than this are no longer swept
 */
@ConfigurationProperties("app.sweeper")
record SweeperProperties(
        @DefaultValue("60s") Duration grace,
        @DefaultValue("10s") Duration interval,
        @DefaultValue("500") int batchSize,
        @DefaultValue("1d") Duration saleLookback) {

    SweeperProperties {
        if (grace.isNegative() || interval.isNegative() || interval.isZero() || saleLookback.isNegative()) {
            throw new IllegalArgumentException("app.sweeper durations must be positive");
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("app.sweeper.batch-size must be at least 1");
        }
    }
}
