package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PlaceBlocksTests {

    private static final long MS = 1_000_000;
    private static final long SALE = 7;

    private final PlaceBlocks blocks = new PlaceBlocks(Duration.ofMillis(20));

    /** What SaleLine does: a place from the block, else a block taken from the line (here a counter). */
    private long next;

    private long calls;

    private long place(int quantity, long nowNanos) {
        OptionalLong place = blocks.take(SALE, quantity, nowNanos);
        if (place.isPresent()) {
            return place.getAsLong();
        }
        long units = blocks.size(SALE, quantity, nowNanos);
        long from = next;
        next += units;
        calls++;
        blocks.taken(SALE, from, from + units, quantity, nowNanos, nowNanos);
        return from;
    }

    @Test
    void places_follow_arrival_order_and_no_place_is_handed_out_twice() {
        List<Long> places = new ArrayList<>();
        for (int arrival = 0; arrival < 500; arrival++) {
            places.add(place(1 + arrival % 2, arrival * MS / 4)); // 4 arrivals a millisecond
        }

        for (int i = 1; i < places.size(); i++) {
            assertThat(places.get(i))
                    .as("arrival %d asks %d units after place %d", i, 1 + (i - 1) % 2, places.get(i - 1))
                    .isGreaterThanOrEqualTo(places.get(i - 1) + 1 + (i - 1) % 2);
        }
    }

    @Test
    void a_crowd_takes_a_block_per_window_of_arrivals_and_a_quiet_line_a_place_per_call() {
        for (int arrival = 0; arrival < 2_000; arrival++) {
            place(1, arrival * MS / 2); // 2 a millisecond for a second
        }
        long crowdCalls = calls;

        next = 0;
        PlaceBlocks quiet = new PlaceBlocks(Duration.ofMillis(20));
        long quietCalls = 0;
        for (int arrival = 0; arrival < 20; arrival++) {
            long now = arrival * 500 * MS; // one every half second
            if (quiet.take(SALE, 1, now).isEmpty()) {
                long units = quiet.size(SALE, 1, now);
                assertThat(units).as("a quiet line's block").isEqualTo(1);
                quiet.taken(SALE, next, next + units, 1, now, now);
                next += units;
                quietCalls++;
            }
        }

        assertThat(crowdCalls).as("calls for 2,000 arrivals in a second").isBetween(40L, 120L);
        assertThat(quietCalls).isEqualTo(20);
    }

    @Test
    void a_block_is_not_used_past_its_window_and_its_places_left_are_never_handed_out() {
        long first = place(1, 0);
        place(1, 5 * MS); // the first block was one place: this one is sized for a window at that rate
        long blockEnd = next;
        assertThat(blocks.take(SALE, 1, 5 * MS + 1)).isPresent();

        long late = place(1, 26 * MS);

        assertThat(late).as("a new block, after the old one's end").isEqualTo(blockEnd);
        assertThat(first).isZero();
    }

    @Test
    void one_block_is_taken_at_a_time_and_those_who_waited_for_it_are_woken() {
        assertThat(blocks.refill(SALE))
                .as("the first to find the block spent takes the next")
                .isNull();
        CompletableFuture<Void> underWay = blocks.refill(SALE);
        assertThat(underWay).as("while the first is being taken").isNotNull();
        assertThat(PlaceBlocks.awaited(underWay, Duration.ofMillis(1)))
                .as("not taken yet")
                .isFalse();

        blocks.refilled(SALE);

        assertThat(PlaceBlocks.awaited(underWay, Duration.ofMillis(1))).isTrue();
        assertThat(blocks.refill(SALE)).as("the next turn").isNull();
    }

    @Test
    void a_block_serves_a_window_from_when_its_call_returned() {
        blocks.taken(SALE, 0, 10, 1, 0, 30 * MS); // asked at 0, its call took 30 ms

        assertThat(blocks.take(SALE, 1, 45 * MS)).hasValue(1);
        assertThat(blocks.take(SALE, 1, 51 * MS)).as("a window after it came").isEmpty();
    }

    @Test
    void the_arrivals_that_waited_for_a_block_count_in_its_rate_from_when_it_was_asked_for() {
        blocks.taken(SALE, 0, 100, 1, 0, 10 * MS);
        for (int waited = 0; waited < 9; waited++) {
            blocks.take(SALE, 1, 10 * MS); // nine arrivals came during the call, and took theirs at once
        }

        // 10 places in the 20 ms since it was asked for: the next block is sized for 20 ms at that rate.
        assertThat(blocks.size(SALE, 1, 20 * MS)).isEqualTo(10);
    }

    @Test
    void a_block_is_never_larger_than_the_bound() {
        for (int arrival = 0; arrival < 10_000; arrival++) {
            place(1, arrival * MS / 100); // 100 a millisecond
        }

        assertThat(blocks.size(SALE, 1, 100 * MS)).isEqualTo(PlaceBlocks.MAX_UNITS);
        assertThat(blocks.size(SALE, 300, 100 * MS))
                .as("a purchase larger than the bound")
                .isEqualTo(300);
    }
}
