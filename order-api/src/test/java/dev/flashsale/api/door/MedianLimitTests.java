package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class MedianLimitTests {

    private static final long MS = Duration.ofMillis(1).toNanos();
    private static final long US = Duration.ofNanos(1_000).toNanos();

    private final MedianLimit limit = new MedianLimit(20 * MS, 100 * MS, 32, 1024);
    /** Where the limit's current interval began: the completion that closed the one before. */
    private long start = 1_000 * MS;

    /**
     * One interval of completed purchases, {@code fast} of them taking {@code fastMs} and then {@code slow}
     * taking {@code slowMs}, with at most {@code inFlight} in progress; the last one closes the interval.
     */
    private int interval(int fast, long fastMs, int slow, long slowMs, int inFlight) {
        int count = fast + slow;
        for (int i = 0; i < count; i++) {
            long rtt = (i < fast ? fastMs : slowMs) * MS;
            long at = i == count - 1 ? start + 101 * MS : start + (i + 1) * US;
            limit.onSample(at - rtt, rtt, inFlight, false);
        }
        start += 101 * MS;
        return limit.getLimit();
    }

    /** An interval in which every purchase took {@code ms}. */
    private int interval(int count, long ms, int inFlight) {
        return interval(0, 0, count, ms, inFlight);
    }

    @Test
    void starts_wide_open() {
        assertThat(limit.getLimit()).isEqualTo(1024);
    }

    @Test
    void a_burst_served_within_the_target_gets_in_whole() {
        assertThat(interval(500, 15, 500)).isEqualTo(1024);
    }

    @Test
    void a_few_slow_purchases_are_no_queue() {
        assertThat(interval(90, 5, 10, 900, 100)).isEqualTo(1024);
        assertThat(interval(10, 300, 10)).isEqualTo(1024); // late, but one interval only
        assertThat(interval(51, 5, 49, 300, 100)).isEqualTo(1024);
    }

    @Test
    void one_late_interval_is_no_standing_queue_yet() {
        // A GC pause or a burst arriving makes one interval late; the limit holds, and fast purchases after
        // it start over.
        assertThat(interval(200, 400, 800)).isEqualTo(1024);
        assertThat(interval(200, 5, 800)).isEqualTo(1024);
        assertThat(interval(200, 400, 800)).isEqualTo(1024);
    }

    @Test
    void a_standing_queue_cuts_the_limit_by_littles_law_at_most_by_half_per_interval() {
        assertThat(interval(200, 400, 800)).isEqualTo(1024);
        // Late twice in a row: 800 in flight x 20 ms / 400 ms = 40, but at most half per interval.
        assertThat(interval(200, 400, 800)).isEqualTo(512);
        assertThat(interval(200, 400, 512)).isEqualTo(256);
        // 100 in flight, mean 40 ms: Little's law says 50, above half of 256.
        assertThat(interval(200, 40, 100)).isEqualTo(128);
        assertThat(interval(200, 40, 100)).isEqualTo(64);
        assertThat(interval(200, 40, 64)).isEqualTo(32); // the floor
        assertThat(interval(200, 400, 32)).isEqualTo(32);
    }

    @Test
    void a_queue_is_a_queue_even_when_its_fastest_purchase_is_fast() {
        // Requests waiting for CPU among virtual threads, not in one FIFO: the lucky one is fast, most wait.
        // Little's law on the mean: 300 x 20 / ~100 ms = 60.
        assertThat(interval(1, 3, 199, 100, 300)).isEqualTo(1024);
        assertThat(interval(1, 3, 199, 100, 300)).isEqualTo(512);
        assertThat(interval(1, 3, 199, 100, 300)).isEqualTo(256);
        assertThat(interval(1, 3, 199, 100, 300)).isEqualTo(128);
        assertThat(interval(1, 3, 199, 100, 300)).isEqualTo(64);
        assertThat(interval(1, 3, 199, 100, 300)).isEqualTo(60);
    }

    @Test
    void the_limit_grows_back_by_a_quarter_per_interval_once_most_purchases_are_fast() {
        interval(200, 400, 800);
        interval(200, 400, 800);
        assertThat(limit.getLimit()).isEqualTo(512);
        assertThat(interval(200, 5, 512)).isEqualTo(640);
        assertThat(interval(200, 5, 640)).isEqualTo(800);
        assertThat(interval(200, 5, 800)).isEqualTo(1000);
        assertThat(interval(200, 5, 1000)).isEqualTo(1024);
    }
}
