package dev.flashsale.worker.reconcile;

import dev.flashsale.common.stock.PendingReservations.Pending;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The PUBLISHED reservations this reconciler read and found waiting for their message. A PUBLISHED one waits
 * however deep the backlog, so reading each of them every pass puts one command per queued order on the
 * sale's one shard every interval, backlog or not: 12,678 of them held by the tests' leftovers on a dev box
 * made 2,000 Redis commands a second at idle. One is read again when its score moves (a worker's claim
 * re-scores it), and in any case between 0.5 and 1.5 × {@code recheck} after it was last read, at random, so
 * that the re-reads of a backlog read in one pass spread over the recheck instead of coming back as one
 * burst. A record that changed without its score moving (a claim in the very millisecond it was reserved, a
 * failover to a replica behind) is then settled at most 1.5 × {@code recheck} late.
 */
final class PublishedWaits {

    private final Map<UUID, Seen> waiting = new ConcurrentHashMap<>();
    private final long recheckNanos;

    private record Seen(long since, long readAgainAt) {}

    PublishedWaits(Duration recheck) {
        this.recheckNanos = recheck.toNanos();
    }

    /** Whether {@code pending} was found PUBLISHED with this score, and is not yet due to be read again. */
    boolean stillWaiting(Pending pending) {
        Seen seen = waiting.get(pending.orderId());
        return seen != null && seen.since() == pending.since() && System.nanoTime() - seen.readAgainAt() < 0;
    }

    /** {@code pending} was just read, and is PUBLISHED. */
    void waiting(Pending pending) {
        long wait = recheckNanos / 2 + ThreadLocalRandom.current().nextLong(recheckNanos + 1);
        waiting.put(pending.orderId(), new Seen(pending.since(), System.nanoTime() + wait));
    }

    /** Forgets what is due for a read anyway: the ones that left the pending set go with them. */
    void forgetStale() {
        long now = System.nanoTime();
        waiting.values().removeIf(seen -> now - seen.readAgainAt() >= 0);
    }
}
