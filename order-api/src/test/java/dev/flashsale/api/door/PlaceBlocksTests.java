package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
        blocks.taken(SALE, from, from + units, quantity, nowNanos);
        return from;
    }

    private long aheadCalls;

    /** What SaleLine does once it takes blocks ahead: here the block taken ahead lands at once. */
    private long placeTakingAhead(int quantity, long nowNanos) {
        OptionalLong place = blocks.take(SALE, quantity, nowNanos);
        if (place.isEmpty()) {
            return place(quantity, nowNanos);
        }
        if (blocks.due(SALE, nowNanos)) {
            long units = blocks.sizeAhead(SALE, nowNanos);
            blocks.spare(SALE, next, next + units, nowNanos);
            next += units;
            aheadCalls++;
        }
        return place.getAsLong();
    }

    @Test
    void with_blocks_taken_ahead_a_crowds_arrivals_take_no_block_themselves_and_keep_their_order() {
        List<Long> places = new ArrayList<>();
        for (int arrival = 0; arrival < 2_000; arrival++) {
            places.add(placeTakingAhead(1 + arrival % 2, arrival * MS / 2)); // 2 a millisecond for a second
        }

        for (int i = 1; i < places.size(); i++) {
            assertThat(places.get(i)).isGreaterThanOrEqualTo(places.get(i - 1) + 1 + (i - 1) % 2);
        }
        assertThat(calls)
                .as("blocks taken on an arrival's path: the first (one place, before any rate) and the next")
                .isEqualTo(2);
        assertThat(aheadCalls).as("blocks taken ahead in a second").isBetween(40L, 160L);
        long asked = places.size() / 2 * 3L;
        assertThat(next - asked)
                .as("places never handed out, of %d, at most a quarter", next)
                .isLessThanOrEqualTo(next / 4);
    }

    @Test
    void a_block_taken_ahead_is_not_used_past_its_own_window() {
        place(1, 0); // a block of one place, used up
        blocks.spare(SALE, 100, 110, 0);

        assertThat(blocks.take(SALE, 1, 25 * MS)).as("taken 25 ms ago").isEmpty();
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
                quiet.taken(SALE, next, next + units, 1, now);
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
    void one_block_is_taken_at_a_time() {
        assertThat(blocks.refill(SALE)).isTrue();
        assertThat(blocks.refill(SALE)).as("while the first is being taken").isFalse();
        blocks.refilled(SALE);
        assertThat(blocks.refill(SALE)).isTrue();
    }

    @Test
    void an_arrival_waits_for_the_block_being_taken_and_no_longer_than_it_may() throws Exception {
        assertThat(blocks.refill(SALE)).isTrue();
        assertThat(blocks.awaitRefill(SALE, Duration.ofMillis(20)))
                .as("not taken yet")
                .isFalse();
        CompletableFuture<Boolean> waiting =
                CompletableFuture.supplyAsync(() -> blocks.awaitRefill(SALE, Duration.ofSeconds(10)));

        blocks.taken(SALE, 0, 10, 1, 0);
        blocks.refilled(SALE);

        assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(blocks.take(SALE, 1, MS)).hasValue(1);
        assertThat(blocks.awaitRefill(SALE, Duration.ZERO))
                .as("nothing being taken")
                .isTrue();
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
