package dev.flashsale.worker.reconcile;

import dev.flashsale.common.stock.PendingReservations.Pending;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The PUBLISHED reservations this reconciler read and found waiting for their message. A PUBLISHED one waits
 * however deep the backlog, so reading each of them every pass puts one command per queued order on the
 * sale's one shard every interval, backlog or not: 12,678 of them held by the tests' leftovers on a dev box
 * made 2,000 Redis commands a second at idle. One is read again when its score moves (a worker's claim
 * re-scores it), and in any case {@code recheck} after it was last read: a claim in the very millisecond it
 * was reserved is then settled at most {@code recheck} late.
 */
final class PublishedWaits {

    private final Map<UUID, Seen> waiting = new ConcurrentHashMap<>();
    private final long recheckNanos;

    private record Seen(long since, long readAt) {}

    PublishedWaits(Duration recheck) {
        this.recheckNanos = recheck.toNanos();
    }

    /** Whether {@code pending} was found PUBLISHED with this score less than {@code recheck} ago. */
    boolean stillWaiting(Pending pending) {
        Seen seen = waiting.get(pending.orderId());
        return seen != null && seen.since() == pending.since() && System.nanoTime() - seen.readAt() < recheckNanos;
    }

    /** {@code pending} was just read, and is PUBLISHED. */
    void waiting(Pending pending) {
        waiting.put(pending.orderId(), new Seen(pending.since(), System.nanoTime()));
    }

    /** Forgets what is due for a read anyway: the ones that left the pending set go with them. */
    void forgetStale() {
        long now = System.nanoTime();
        waiting.values().removeIf(seen -> now - seen.readAt() >= recheckNanos);
    }

    int size() {
        return waiting.size();
    }
}
