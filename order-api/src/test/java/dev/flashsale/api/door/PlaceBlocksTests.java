package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.stock.SaleLines.Front;
import dev.flashsale.common.stock.SaleLines.Joined;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import java.util.stream.LongStream;
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
        blocks.taken(SALE, from, from + units, from + quantity, nowNanos, nowNanos);
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
                quiet.taken(SALE, next, next + units, next + 1, now, now);
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
    void arrivals_that_find_the_block_spent_while_another_takes_the_next_are_handed_its_first_places()
            throws Exception {
        Front line = new Front(0, 0, 0, 1, 0, 0, 0);
        long now = System.nanoTime(); // a crowd: its last block of 40 went in 20 ms, and is spent
        blocks.taken(SALE, 60, 100, 100, now - 20 * MS, now - 20 * MS);
        CountDownLatch calling = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        AtomicInteger joins = new AtomicInteger();
        AtomicInteger alone = new AtomicInteger();
        LongFunction<Optional<Joined>> join = units -> {
            joins.incrementAndGet();
            calling.countDown();
            try {
                answer.await(); // Redis takes its time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Optional.of(new Joined(100, line)); // places 100 .. 100 + units
        };
        Supplier<Optional<Joined>> ownCall = () -> {
            alone.incrementAndGet();
            return Optional.empty();
        };
        try (ExecutorService arrivals = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Optional<Joined>> first = arrivals.submit(() -> blocks.place(SALE, 1, line, join, ownCall));
            assertThat(calling.await(5, TimeUnit.SECONDS)).isTrue();
            List<Future<Optional<Joined>>> waiting = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                waiting.add(arrivals.submit(() -> blocks.place(SALE, 1, line, join, ownCall)));
            }
            Thread.sleep(50);
            assertThat(waiting).as("waiting for the call under way").noneMatch(Future::isDone);

            answer.countDown();

            assertThat(first.get().orElseThrow().place()).isEqualTo(100);
            assertThat(blocks.take(SALE, 1, System.nanoTime()))
                    .as("an arrival after the call: behind those who waited for it, woken or not")
                    .hasValue(104);
            List<Long> theirs = new ArrayList<>();
            for (Future<Optional<Joined>> arrival : waiting) {
                theirs.add(arrival.get().orElseThrow().place());
            }
            assertThat(theirs).containsExactlyInAnyOrder(101L, 102L, 103L);
        }
        assertThat(joins).as("one call for the four").hasValue(1);
        assertThat(alone).hasValue(0);
    }

    /**
     * A quiet line's calls, for the tests of arrivals that wait: its last block, one place, went a second
     * ago; the first call takes its time until {@link #answer} (Redis is slow); places from 100 on; every
     * call's size kept.
     */
    private final class HeldLine {
        final Front line = new Front(0, 0, 0, 1, 0, 0, 0);
        final List<Long> sizes = Collections.synchronizedList(new ArrayList<>());
        final AtomicLong handedOut = new AtomicLong(100);
        final CountDownLatch calling = new CountDownLatch(1);
        final CountDownLatch answer = new CountDownLatch(1);

        HeldLine() {
            long now = System.nanoTime();
            blocks.taken(SALE, 0, 1, 1, now - 1_000 * MS, now - 1_000 * MS);
        }

        Optional<Joined> join(long units) {
            sizes.add(units);
            if (sizes.size() == 1) {
                calling.countDown();
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return Optional.of(new Joined(handedOut.getAndAdd(units), line));
        }

        Future<Optional<Joined>> arrive(ExecutorService arrivals, int quantity) {
            return arrivals.submit(() -> blocks.place(
                    SALE,
                    quantity,
                    line,
                    this::join,
                    () -> Optional.of(new Joined(handedOut.getAndIncrement(), line))));
        }

        /** Once the first call is under way, arrivals of {@code quantities} units, once they all wait for it. */
        List<Future<Optional<Joined>>> whileCalling(ExecutorService arrivals, int... quantities) throws Exception {
            assertThat(calling.await(5, TimeUnit.SECONDS)).isTrue();
            List<Future<Optional<Joined>>> waiting = new ArrayList<>();
            long units = 0;
            for (int quantity : quantities) {
                waiting.add(arrive(arrivals, quantity));
                units += quantity;
            }
            long deadline = System.nanoTime() + 5_000 * MS;
            while (blocks.waitingUnits(SALE) < units && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(blocks.waitingUnits(SALE))
                    .as("units waiting for the call under way")
                    .isEqualTo(units);
            return waiting;
        }
    }

    @Test
    void arrivals_the_block_does_not_cover_get_a_call_more_not_one_each() throws Exception {
        HeldLine held = new HeldLine();
        List<Long> places = new ArrayList<>();
        try (ExecutorService arrivals = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Optional<Joined>>> crowd = new ArrayList<>();
            crowd.add(held.arrive(arrivals, 1));
            crowd.addAll(held.whileCalling(arrivals, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)); // a burst the rate did not foresee

            held.answer.countDown();

            for (Future<Optional<Joined>> arrival : crowd) {
                places.add(arrival.get().orElseThrow().place());
            }
        }
        assertThat(held.sizes.getFirst())
                .as("the first call's block, at the quiet line's rate")
                .isEqualTo(1);
        assertThat(held.sizes).as("one call more, for the ten still waiting").containsExactly(1L, 10L);
        assertThat(places)
                .as("a place each, none on its own")
                .containsExactlyInAnyOrderElementsOf(
                        LongStream.range(100, 111).boxed().toList());
        assertThat(blocks.waitingUnits(SALE)).isZero();
    }

    @Test
    void a_waiter_larger_than_a_block_gets_a_call_sized_for_it() throws Exception {
        HeldLine held = new HeldLine();
        int large = PlaceBlocks.MAX_UNITS + 44; // a purchase may ask up to 1,000 units
        try (ExecutorService arrivals = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Optional<Joined>> first = held.arrive(arrivals, 1);
            Future<Optional<Joined>> big = held.whileCalling(arrivals, large).getFirst();

            held.answer.countDown();

            assertThat(first.get().orElseThrow().place()).isEqualTo(100);
            assertThat(big.get().orElseThrow().place())
                    .as("its place, from the call more")
                    .isEqualTo(101);
        }
        assertThat(held.sizes)
                .as("one call more, of its units: no call of places it cannot use")
                .containsExactly(1L, (long) large);
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
