package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class GroupCommitTests {

    /** The production call without its linger report, which these tests do not read. */
    private static <T, R> R submit(GroupCommit<T, R> group, T item) {
        return group.submit(item, lingered -> {});
    }

    private static GroupCommitProperties settings(int committers, int maxBatch, Duration delay, Duration shedAfter) {
        return new GroupCommitProperties(
                committers, maxBatch, delay, shedAfter, 10_000, Duration.ZERO, Duration.ofSeconds(30));
    }

    /** Batches of up to 50 that wait {@code linger} for company when a round is free. */
    private static GroupCommitProperties lingering(int committers, Duration linger) {
        return new GroupCommitProperties(
                committers, 50, Duration.ofSeconds(10), Duration.ofSeconds(10), 10_000, linger, Duration.ofSeconds(30));
    }

    /** A group whose every round trip waits until {@code release} opens, then answers each item itself. */
    private static GroupCommit<Integer, Integer> stuckUntil(
            CountDownLatch release, GroupCommitProperties settings, MeterRegistry meters) {
        return new GroupCommit<>(
                "test",
                settings,
                items -> {
                    await(release);
                    return items;
                },
                meters);
    }

    /** Items {@code from} (inclusive) to {@code to} (exclusive), each submitted on a thread of its own. */
    private static List<CompletableFuture<Integer>> submitted(
            GroupCommit<Integer, Integer> group, int from, int to, ExecutorService threads) {
        return IntStream.range(from, to)
                .mapToObj(item -> CompletableFuture.supplyAsync(() -> submit(group, item), threads))
                .toList();
    }

    /** Opens the stuck round trips; every item submitted is answered within 5 s. */
    private static void releaseAndComplete(CountDownLatch release, List<CompletableFuture<Integer>> blocked)
            throws Exception {
        release.countDown();
        for (CompletableFuture<Integer> result : blocked) {
            result.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void concurrent_items_share_round_trips_and_each_gets_its_own_result() throws Exception {
        List<Integer> batchSizes = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch firstCommitStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (GroupCommit<Integer, String> group = new GroupCommit<>(
                        "test",
                        settings(1, 50, Duration.ofSeconds(10), Duration.ofSeconds(10)),
                        items -> {
                            batchSizes.add(items.size());
                            firstCommitStarted.countDown();
                            await(release);
                            return items.stream().map(i -> "r" + i).toList();
                        },
                        new SimpleMeterRegistry());
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<CompletableFuture<String>> results = new ArrayList<>();
            results.add(CompletableFuture.supplyAsync(() -> submit(group, 0), threads));
            firstCommitStarted.await(5, TimeUnit.SECONDS);
            // While the first round trip is under way, 120 more arrive: they wait and go together.
            IntStream.rangeClosed(1, 120)
                    .forEach(i -> results.add(CompletableFuture.supplyAsync(() -> submit(group, i), threads)));
            Thread.sleep(200);
            release.countDown();
            for (int i = 0; i < results.size(); i++) {
                assertThat(results.get(i).get(5, TimeUnit.SECONDS)).isEqualTo("r" + i);
            }
        }
        assertThat(batchSizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(121);
        assertThat(batchSizes).first().isEqualTo(1);
        assertThat(batchSizes).hasSize(4).allSatisfy(size -> assertThat(size).isLessThanOrEqualTo(50));
    }

    @Test
    void a_failed_batch_fails_every_request_in_it_and_the_next_batch_still_runs() {
        try (GroupCommit<Integer, Integer> group = new GroupCommit<>(
                "test",
                settings(1, 10, Duration.ofSeconds(1), Duration.ofSeconds(1)),
                items -> {
                    if (items.contains(13)) {
                        throw new IllegalStateException("unlucky batch");
                    }
                    return items;
                },
                new SimpleMeterRegistry())) {
            assertThatThrownBy(() -> submit(group, 13)).hasMessage("unlucky batch");
            assertThat(submit(group, 7)).isEqualTo(7);
        }
    }

    @Test
    void a_burst_is_admitted_but_a_standing_late_queue_is_refused_until_it_is_fresh_again() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (GroupCommit<Integer, Integer> group =
                        stuckUntil(release, settings(1, 1, Duration.ofMillis(20), Duration.ofMillis(100)), meters);
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            assertThat(group.admits()).as("an empty queue").isTrue();
            List<CompletableFuture<Integer>> blocked = submitted(group, 0, 4, threads);
            // One item in the stuck round, one taken by the committer waiting for it, two queued behind them.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (meters.get("flashsale.purchase.group.queued").gauge().value() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            Thread.sleep(40);
            assertThat(group.admits()).as("late, but only just: a burst").isTrue();
            Thread.sleep(150);
            assertThat(group.admits()).as("late for longer than shed-after").isFalse();
            releaseAndComplete(release, blocked);
            assertThat(group.admits()).as("drained").isTrue();
        }
    }

    @Test
    void a_late_queue_shorter_than_a_batch_is_a_slow_round_trip_and_is_not_shed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (GroupCommit<Integer, Integer> group =
                        stuckUntil(release, settings(1, 10, Duration.ofMillis(20), Duration.ofMillis(50)), meters);
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<CompletableFuture<Integer>> blocked = new ArrayList<>(submitted(group, 0, 1, threads));
            Thread.sleep(50); // the first item is in the stuck committer
            blocked.addAll(submitted(group, 1, 4, threads));
            Thread.sleep(40);
            assertThat(group.admits()).isTrue();
            Thread.sleep(150);
            assertThat(group.admits()).as("three late items, a batch is ten").isTrue();
            releaseAndComplete(release, blocked);
        }
    }

    @Test
    void a_full_queue_is_refused_at_once() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        GroupCommitProperties settings = new GroupCommitProperties(
                1, 1, Duration.ofSeconds(10), Duration.ofSeconds(10), 2, Duration.ZERO, Duration.ofSeconds(30));
        try (GroupCommit<Integer, Integer> group = stuckUntil(release, settings, new SimpleMeterRegistry());
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<CompletableFuture<Integer>> blocked = submitted(group, 0, 4, threads);
            Thread.sleep(100); // one in the stuck round, one taken by the committer waiting for it, two queued
            assertThat(group.admits()).isFalse();
            releaseAndComplete(release, blocked);
        }
    }

    @Test
    void a_lone_item_is_committed_on_the_callers_own_thread() throws Exception {
        try (GroupCommit<Integer, Thread> group = new GroupCommit<>(
                        "test",
                        settings(2, 10, Duration.ofSeconds(1), Duration.ofSeconds(1)),
                        items -> items.stream()
                                .map(item -> Thread.currentThread())
                                .toList(),
                        new SimpleMeterRegistry());
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 20; i++) {
                int item = i;
                CompletableFuture<Thread[]> caller = CompletableFuture.supplyAsync(
                        () -> new Thread[] {Thread.currentThread(), submit(group, item)}, threads);
                Thread[] callerAndCommitter = caller.get(5, TimeUnit.SECONDS);
                assertThat(callerAndCommitter[1]).isSameAs(callerAndCommitter[0]);
            }
        }
    }

    @Test
    void items_arriving_within_the_linger_share_one_round_trip_and_a_lone_one_after_a_quiet_spell_does_not_wait()
            throws Exception {
        Duration linger = Duration.ofMillis(500);
        List<List<Integer>> batches = Collections.synchronizedList(new ArrayList<>());
        try (GroupCommit<Integer, String> group = new GroupCommit<>(
                        "test",
                        lingering(4, linger),
                        items -> {
                            batches.add(List.copyOf(items));
                            return items.stream().map(i -> "r" + i).toList();
                        },
                        new SimpleMeterRegistry());
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            long started = System.nanoTime();
            assertThat(submit(group, 0)).isEqualTo("r0");
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .as("the first item follows a quiet spell: it commits at once")
                    .isLessThan(linger);
            // Twenty more right behind it: four rounds are free, yet they go in one round trip.
            List<CompletableFuture<String>> results = IntStream.rangeClosed(1, 20)
                    .mapToObj(i -> CompletableFuture.supplyAsync(() -> submit(group, i), threads))
                    .toList();
            for (int i = 0; i < results.size(); i++) {
                assertThat(results.get(i).get(5, TimeUnit.SECONDS)).isEqualTo("r" + (i + 1));
            }
        }
        assertThat(batches).hasSize(2);
        assertThat(batches.get(0)).containsExactly(0);
        assertThat(batches.get(1))
                .containsExactlyInAnyOrderElementsOf(
                        IntStream.rangeClosed(1, 20).boxed().toList());
    }

    @Test
    void each_item_is_told_how_long_it_lingered_on_purpose_and_a_wait_for_a_free_round_is_not_counted()
            throws Exception {
        Duration linger = Duration.ofMillis(300);
        Map<Integer, Long> lingered = new ConcurrentHashMap<>();
        Map<Integer, Long> waited = new ConcurrentHashMap<>();
        try (GroupCommit<Integer, Integer> group = new GroupCommit<>(
                        "test",
                        lingering(1, linger),
                        items -> {
                            if (items.contains(1)) {
                                sleep(600); // the round trip of the first lingering round: longer than the linger
                            }
                            return items;
                        },
                        new SimpleMeterRegistry());
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Function<Integer, CompletableFuture<Integer>> submit = item -> CompletableFuture.supplyAsync(
                    () -> {
                        long started = System.nanoTime();
                        try {
                            return group.submit(item, nanos -> lingered.put(item, nanos));
                        } finally {
                            waited.put(item, System.nanoTime() - started);
                        }
                    },
                    threads);
            assertThat(submit.apply(0).get(5, TimeUnit.SECONDS)).isZero(); // after a quiet spell: at once
            var first = submit.apply(1); // opens a round that lingers 300 ms
            Thread.sleep(150);
            var second = submit.apply(2); // joins it halfway through the linger
            Thread.sleep(300);
            // Arrives while the only committer is busy with that round trip: it waits for it, and that wait is
            // the path's cost; by the time the committer takes it, it is older than the linger.
            var late = submit.apply(3);
            for (var result : List.of(first, second, late)) {
                result.get(5, TimeUnit.SECONDS);
            }
        }
        assertThat(lingered.get(0)).isZero();
        assertThat(Duration.ofNanos(lingered.get(1))).isBetween(Duration.ofMillis(250), Duration.ofMillis(400));
        assertThat(Duration.ofNanos(lingered.get(2))).isBetween(Duration.ofMillis(80), Duration.ofMillis(250));
        assertThat(lingered.get(3)).isZero();
        assertThat(Duration.ofNanos(waited.get(1) - lingered.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(550));
        assertThat(Duration.ofNanos(waited.get(3))).isGreaterThanOrEqualTo(Duration.ofMillis(350));
    }

    @Test
    void a_request_stops_waiting_at_max_wait_and_an_item_still_queued_is_never_committed() throws Exception {
        List<Integer> committed = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch release = new CountDownLatch(1);
        try (GroupCommit<Integer, Integer> group = new GroupCommit<>(
                        "test",
                        new GroupCommitProperties(
                                1,
                                1,
                                Duration.ofSeconds(10),
                                Duration.ofSeconds(10),
                                100,
                                Duration.ZERO,
                                Duration.ofMillis(300)),
                        items -> {
                            committed.addAll(items);
                            await(release); // a round trip that hangs, as a publish on a blocked connection
                            return items;
                        },
                        new SimpleMeterRegistry());
                var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            // 0 commits on its own thread and hangs there; 1 is taken by the committer, which waits for the
            // round 0 holds; 2 stays queued.
            CompletableFuture<Integer> hung = CompletableFuture.supplyAsync(() -> submit(group, 0), threads);
            Thread.sleep(100);
            CompletableFuture<Integer> taken = CompletableFuture.supplyAsync(() -> submit(group, 1), threads);
            Thread.sleep(100);
            long started = System.nanoTime();
            assertThatThrownBy(() -> submit(group, 2)).isInstanceOf(Overdue.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
            assertThat(taken)
                    .failsWithin(Duration.ofSeconds(2))
                    .withThrowableThat()
                    .withCauseInstanceOf(Overdue.class);

            release.countDown();
            assertThat(hung.get(5, TimeUnit.SECONDS)).isZero();
            Thread.sleep(200);
            assertThat(committed)
                    .as("the taken item's round still ran; the queued one was taken out")
                    .containsExactly(0, 1);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
