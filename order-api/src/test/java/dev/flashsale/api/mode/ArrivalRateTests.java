package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ArrivalRateTests {

    private static final long TICK = Duration.ofMillis(100).toNanos();

    @Test
    void a_trickle_reads_as_its_rate_between_arrivals_not_as_a_saw_down_to_zero() {
        ArrivalRate rate = new ArrivalRate(Duration.ofSeconds(1), 0);
        long total = 0;
        double low = Double.MAX_VALUE;
        double high = 0;
        for (int tick = 1; tick <= 300; tick++) { // 30 s, one purchase a second, sampled every 100 ms
            if (tick % 10 == 0) {
                total++;
            }
            double perSecond = rate.sample(total, tick * TICK);
            if (tick > 100) {
                low = Math.min(low, perSecond);
                high = Math.max(high, perSecond);
            }
        }
        assertThat(low).isGreaterThan(0.5);
        assertThat(high).isLessThan(1.6);
    }

    @Test
    void a_crowd_shows_within_a_second_whatever_the_sampling_interval() {
        for (long tick : new long[] {TICK, 2 * TICK, 5 * TICK}) {
            ArrivalRate rate = new ArrivalRate(Duration.ofSeconds(1), 0);
            long now = 0;
            double perSecond = 0;
            while (now < Duration.ofSeconds(1).toNanos()) {
                now += tick;
                perSecond = rate.sample(now / Duration.ofMillis(1).toNanos(), now); // 1,000/s
            }
            assertThat(perSecond).as("sampled every %d ms", tick / 1_000_000).isCloseTo(632, within(1.0));
        }
    }

    @Test
    void two_samples_at_the_same_instant_change_nothing() {
        ArrivalRate rate = new ArrivalRate(Duration.ofSeconds(1), 0);
        double before = rate.sample(100, TICK);
        assertThat(rate.sample(500, TICK)).isEqualTo(before);
    }
}
