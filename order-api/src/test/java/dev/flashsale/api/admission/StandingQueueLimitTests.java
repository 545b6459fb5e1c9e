package dev.flashsale.api.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class StandingQueueLimitTests {

    private static final long MS = Duration.ofMillis(1).toNanos();

    private final StandingQueueLimit limit = new StandingQueueLimit(20 * MS, 100 * MS, 64, 1024);
    private long now = 1_000 * MS;

    /** One interval of completed purchases: {@code count} of them, the fastest taking {@code fastestMs}. */
    private int interval(int count, long fastestMs, long slowestMs, int inFlight) {
        for (int i = 0; i < count; i++) {
            long rtt = (i == 0 ? fastestMs : slowestMs) * MS;
            now += 110 * MS / count;
            limit.onSample(now - rtt, rtt, inFlight, false);
        }
        return limit.getLimit();
    }

    @Test
    void starts_wide_open() {
        assertThat(limit.getLimit()).isEqualTo(1024);
    }

    @Test
    void a_burst_whose_first_purchases_complete_fast_keeps_the_limit() {
        assertThat(interval(500, 3, 900, 500)).isEqualTo(1024);
    }

    @Test
    void a_standing_queue_cuts_the_limit_by_littles_law_and_it_grows_back_once_purchases_are_fast() {
        // 800 in flight and even the fastest took 400 ms: 800 x 20 / 400 = 40, floored at 64.
        assertThat(interval(200, 400, 900, 800)).isEqualTo(64);
        // 300 in flight, fastest 50 ms: would be 120, but the limit only drops while the queue stands.
        assertThat(interval(200, 50, 300, 300)).isEqualTo(64);
        // Fast again: a quarter more per interval.
        assertThat(interval(200, 5, 40, 64)).isEqualTo(80);
        assertThat(interval(200, 5, 40, 80)).isEqualTo(100);
    }

    @Test
    void a_few_slow_purchases_are_no_queue() {
        assertThat(interval(10, 300, 900, 10)).isEqualTo(1024);
    }
}
