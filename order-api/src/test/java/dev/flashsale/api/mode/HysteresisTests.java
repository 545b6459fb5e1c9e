package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.PurchaseMode;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class HysteresisTests {

    private static final AutoModeProperties LIMITS = AutoModeLimits.DEFAULTS;

    private final Hysteresis hysteresis = new Hysteresis(LIMITS);
    private Instant now = Instant.parse("2026-11-23T10:00:00Z");

    private PurchaseMode feed(double pressure, int samples) {
        for (int i = 0; i < samples; i++) {
            now = now.plus(LIMITS.sampleInterval());
            hysteresis.sample(pressure, now);
        }
        return hysteresis.mode();
    }

    @Test
    void switches_to_async_only_after_enough_consecutive_high_samples() {
        assertThat(feed(1.5, 2)).isEqualTo(PurchaseMode.SYNC);
        assertThat(feed(0.9, 1)).isEqualTo(PurchaseMode.SYNC);
        assertThat(feed(1.5, 2)).isEqualTo(PurchaseMode.SYNC);
        assertThat(feed(1.5, 1)).isEqualTo(PurchaseMode.ASYNC);
    }

    @Test
    void returns_to_sync_only_after_a_longer_dwell_below_the_low_threshold() {
        feed(2.0, 3);
        assertThat(feed(0.7, 100)).as("between low and high: stays").isEqualTo(PurchaseMode.ASYNC);
        assertThat(feed(0.2, 24)).isEqualTo(PurchaseMode.ASYNC);
        assertThat(feed(0.2, 1)).isEqualTo(PurchaseMode.SYNC);
    }

    @Test
    void an_oscillating_load_near_the_threshold_switches_at_most_once_per_minimum_interval() {
        int switches = 0;
        PurchaseMode previous = hysteresis.mode();
        // One minute of load flapping around the high threshold every other sample.
        for (int i = 0; i < 300; i++) {
            now = now.plus(LIMITS.sampleInterval());
            hysteresis.sample(i % 4 < 2 ? 1.05 : 0.45, now);
            if (hysteresis.mode() != previous) {
                switches++;
                previous = hysteresis.mode();
            }
        }
        assertThat(switches).isZero();
    }

    @Test
    void never_switches_twice_within_the_minimum_time() {
        Instant first = now;
        feed(2.0, 3);
        assertThat(hysteresis.mode()).isEqualTo(PurchaseMode.ASYNC);
        Hysteresis fast = new Hysteresis(AutoModeLimits.switchingAfter(1, 1));
        assertThat(fast.sample(2.0, first)).isEqualTo(PurchaseMode.ASYNC);
        assertThat(fast.sample(0.0, first.plusSeconds(1))).isNull();
        assertThat(fast.sample(0.0, first.plusSeconds(4))).isNull();
        assertThat(fast.sample(0.0, first.plusSeconds(6))).isEqualTo(PurchaseMode.SYNC);
    }
}
