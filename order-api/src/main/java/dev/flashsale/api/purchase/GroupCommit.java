package dev.flashsale.api.purchase;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit: concurrent requests hand their item to a few committer threads, and each committer takes
 * everything queued (up to a batch size) and pays one round trip for all of it — one transaction, or one
 * message under one publisher confirm. Batches grow by themselves while every round is busy; below that,
 * a round waits up to {@code linger} after its first item's arrival for more to go along (one committer
 * gathers at a time, so that lingering rounds do not split the arrivals between them). Every request
 * still waits for the commit that carries its own item and gets its own result.
 *
 * <p>A request that finds nothing queued and a round free, and follows a quiet spell of at least the
 * linger (nothing is likely to join it), commits its item on its own thread: a lone request pays no
 * trip to a committer and back (two thread wake-ups; parking and unparking threads took 18 % of the
 * API's CPU in the profile of ASYNC at 400/s). At most {@code committers} round trips run at once either
 * way, and a caller never takes a round that a committer holding queued items is already waiting for.
 *
 * <p>Admission is decided by measured queueing delay, not by a fixed wait, in the manner of CoDel: a burst
 * may queue briefly, but once the oldest queued item has been older than {@code maxQueueDelay} for longer
 * than {@code shedAfter}, with at least a full batch waiting — a standing queue of arrivals the committers
 * cannot keep up with, not a burst or one slow round trip — {@link #admits()} is false until the queue is
 * fresh again, and the caller refuses at once instead of queueing for seconds. A full queue refuses too.
 */
final class GroupCommit<T, R> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupCommit.class);

    /**
     * An item on its way, and how long it waited on purpose: the part of its wait that fell within its
     * round's linger (set by the gathering committer before the round commits, read by the caller after).
     */
    private static final class Queued<T, R> {
        final T item;
        final long queuedAt;
        final CompletableFuture<R> result = new CompletableFuture<>();
        long lingeredNanos;

        Queued(T item, long queuedAt) {
            this.item = item;
            this.queuedAt = queuedAt;
        }
    }

    private final String name;
    private final BlockingQueue<Queued<T, R>> queue = new LinkedBlockingQueue<>();
    /** Round trips under way, committers' and callers' own: at most {@code committers} at once. */
    private final Semaphore rounds;

    private final Function<List<T>, List<R>> commit;
    private final int maxBatch;
    private final long maxQueueDelayNanos;
    private final long shedAfterNanos;
    private final int maxQueued;
    private final long lingerNanos;
    private final long maxWaitNanos;
    /** Held by the committer that takes the next batch, lingering for it included. */
    private final ReentrantLock gathering = new ReentrantLock();
    /** When the last item arrived (System.nanoTime): a lone item after a quiet spell commits at once. */
    private volatile long lastArrival;
    /** Since when the queue's oldest item has been late (System.nanoTime), or 0 while it is fresh. */
    private volatile long lateSince;

    private final List<Thread> committers = new ArrayList<>();
    private final DistributionSummary batchSizes;
    private final Timer queueDelay;
    private volatile boolean running = true;

    /**
     * @param commit commits a batch and answers one result per item, in order; it should not throw (an
     *     exception fails every request of the batch)
     */
    GroupCommit(String name, GroupCommitProperties settings, Function<List<T>, List<R>> commit, MeterRegistry meters) {
        this.name = name;
        this.commit = commit;
        this.maxBatch = settings.maxBatch();
        this.maxQueueDelayNanos = settings.maxQueueDelay().toNanos();
        this.shedAfterNanos = settings.shedAfter().toNanos();
        this.maxQueued = settings.maxQueued();
        this.lingerNanos = settings.linger().toNanos();
        this.maxWaitNanos = settings.maxWait().toNanos();
        this.lastArrival = System.nanoTime() - lingerNanos;
        this.rounds = new Semaphore(settings.committers(), true);
        this.batchSizes = DistributionSummary.builder("flashsale.purchase.group.size")
                .description("Items committed together in one round trip")
                .tag("path", name)
                .publishPercentiles(0.5, 0.99)
                .register(meters);
        this.queueDelay = Timer.builder("flashsale.purchase.group.wait")
                .description("Time an item waited for a committer")
                .tag("path", name)
                .publishPercentiles(0.5, 0.99)
                .register(meters);
        meters.gauge("flashsale.purchase.group.queued", List.of(Tag.of("path", name)), queue, BlockingQueue::size);
        for (int i = 0; i < settings.committers(); i++) {
            committers.add(
                    Thread.ofPlatform().name(name + "-committer-" + i).daemon().start(this::run));
        }
    }

    /** Whether a new item would be committed soon: the queue is not full, and not standing late. */
    boolean admits() {
        if (queue.size() >= maxQueued) {
            return false;
        }
        Queued<T, R> oldest = queue.peek();
        long now = System.nanoTime();
        if (oldest == null || now - oldest.queuedAt < maxQueueDelayNanos) {
            lateSince = 0;
            return true;
        }
        if (queue.size() < maxBatch) {
            // Late but short: a slow round trip (a cold start, a slow dependency), not more arrivals than
            // the committers can take. Timeouts and breakers deal with slowness; shedding would not help.
            return true;
        }
        long since = lateSince;
        if (since == 0) {
            lateSince = now;
            return true;
        }
        return now - since < shedAfterNanos;
    }

    /**
     * Commits the item on this thread when it follows a quiet spell, nothing is queued and a round is free;
     * otherwise queues it for a committer. Either way, waits for the commit that carries it, telling
     * {@code lingered} (before answering, even when the commit failed) how many nanoseconds of the wait were
     * the linger: time spent on purpose, waiting for others to join the round, rather than for a round trip
     * or a free round. What the path costs is the rest.
     *
     * <p>A queued item is waited for at most {@code maxWait}: a dependency that blocks (a broker's memory
     * alarm stops its publishers) holds the committers, never the requests without bound.
     *
     * @throws Overdue when the wait ran out
     */
    R submit(T item, LongConsumer lingered) {
        if (!running) {
            throw new IllegalStateException(name + " is shutting down");
        }
        long now = System.nanoTime();
        Queued<T, R> queued = new Queued<>(item, now);
        boolean quiet = now - lastArrival >= lingerNanos;
        lastArrival = now;
        if (quiet && queue.isEmpty() && freeRound()) {
            try {
                commit(List.of(queued));
            } finally {
                rounds.release();
            }
        } else {
            queue.add(queued);
            if (!running && queue.remove(queued)) {
                throw new IllegalStateException(name + " is shutting down");
            }
        }
        try {
            R result;
            try {
                result = queued.result.get(maxWaitNanos, TimeUnit.NANOSECONDS);
            } finally {
                lingered.accept(queued.lingeredNanos);
            }
            return result;
        } catch (TimeoutException e) {
            throw new Overdue(name, queue.remove(queued));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + name, e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e.getCause());
        }
    }

    /** A free round for the caller, unless a committer is already waiting for one (the semaphore is fair). */
    private boolean freeRound() {
        try {
            return rounds.tryAcquire(0, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void run() {
        List<Queued<T, R>> batch = new ArrayList<>(maxBatch);
        while (running || !queue.isEmpty()) {
            boolean round = false;
            try {
                round = gather(batch);
                if (round) {
                    commit(batch);
                }
            } catch (InterruptedException e) {
                // Interrupted while gathering: what it had taken was never committed.
                batch.forEach(queued ->
                        queued.result.completeExceptionally(new IllegalStateException(name + " is shutting down")));
                Thread.currentThread().interrupt();
                return;
            } finally {
                if (round) {
                    rounds.release();
                }
                batch.clear();
            }
        }
    }

    /**
     * Takes the next batch into {@code batch}: the first queued item, what arrives within the linger after
     * it, and whatever queued up until a round was free. True when it took a round (the caller releases it).
     */
    private boolean gather(List<Queued<T, R>> batch) throws InterruptedException {
        gathering.lockInterruptibly();
        try {
            Queued<T, R> first = queue.poll(100, TimeUnit.MILLISECONDS);
            if (first == null) {
                return false;
            }
            batch.add(first);
            long lingerFrom = System.nanoTime();
            long linger = first.queuedAt + lingerNanos - lingerFrom;
            if (linger > 0) {
                TimeUnit.NANOSECONDS.sleep(linger);
            }
            long lingerTo = System.nanoTime();
            rounds.acquire();
            queue.drainTo(batch, maxBatch - 1);
            if (linger > 0) {
                for (Queued<T, R> queued : batch) {
                    queued.lingeredNanos = Math.max(0, lingerTo - Math.max(queued.queuedAt, lingerFrom));
                }
            }
            return true;
        } finally {
            gathering.unlock();
        }
    }

    private void commit(List<Queued<T, R>> batch) {
        long now = System.nanoTime();
        batchSizes.record(batch.size());
        List<T> items = new ArrayList<>(batch.size());
        for (Queued<T, R> queued : batch) {
            queueDelay.record(now - queued.queuedAt, TimeUnit.NANOSECONDS);
            items.add(queued.item);
        }
        try {
            List<R> results = commit.apply(items);
            if (results.size() != items.size()) {
                throw new IllegalStateException(name + " answered " + results.size() + " for " + items.size());
            }
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).result.complete(results.get(i));
            }
        } catch (RuntimeException e) {
            log.error("{} failed a batch of {}", name, batch.size(), e);
            batch.forEach(queued -> queued.result.completeExceptionally(e));
        }
    }

    /** Stops taking items; the committers finish what is queued, then end. */
    @Override
    public void close() {
        running = false;
        for (Thread committer : committers) {
            try {
                committer.join(Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        // Whatever slipped in after the committers ended was never committed: it fails, as a shutdown.
        for (Queued<T, R> left = queue.poll(); left != null; left = queue.poll()) {
            left.result.completeExceptionally(new IllegalStateException(name + " is shutting down"));
        }
    }
}
