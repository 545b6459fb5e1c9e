package dev.flashsale.worker.reconcile;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.reconciler.*: settling reservations that nobody finished. A reservation is final within
 * {@code handoffTimeout + interval} (docs/architecture.md#the-reconciler-and-its-slo), plus however long
 * Postgres is unreachable; a PUBLISHED one once a worker took its message.
 *
 * @param grace a SYNC reservation (RESERVED or WRITING) this old is settled, and an ASYNC one still RESERVED
 *     is published for a worker: the API writes within its connection and query timeouts, and publishes or
 *     gives back within its ASYNC max-wait (seconds), so by then its request is over
 * @param handoffTimeout an ASYNC reservation (RESERVED, PUBLISHED, or CLAIMED since its latest claim) this
 *     old is compared with Postgres: an order Postgres has is followed, one it does not have is closed FAILED
 *     once no queue holds a message that could still write it (see {@code queuesQuiet}), so an order whose
 *     message waits in a backlog waits however long. Longer than a record stays CLAIMED in the normal course: one
 *     delivery's write, plus the retry delay should a retry copy's PUBLISHED mark have failed; an order a
 *     worker writes later than this finds its FAILED record and changes nothing
 * @param interval pause between two passes (also the delay before the first)
 * @param batchSize reservations read per page (one script call); a pass reads every page of every sale
 * @param saleLookback sales that ended longer ago than this are no longer reconciled
 * @param publishedRecheck a PUBLISHED reservation found waiting for its message is not read again for this
 *     long (0.5 to 1.5 ×, at random) unless a worker claims it (a claim moves its score): a backlog costs
 *     Redis one read per queued order per recheck, not per pass
 * @param queuesQuiet an ASYNC reservation past the hand-off timeout that Postgres does not have is closed
 *     only once the order and retry queues have stood empty this long: longer than a batch a worker holds
 *     unacked (the broker does not count those), so that no message of it can still be in flight
 * @param instanceLease an API instance another one has outlived by this long (its heartbeat, every second,
 *     stopped while theirs went on) has lapsed: the reservations its requests hold are settled at once, as
 *     past the grace ({@link dev.flashsale.common.stock.InstanceLeases})
 * @param leaseCheck how often the leases are read for a lapsed instance (one script call)
 */
@ConfigurationProperties("app.reconciler")
record ReconcilerProperties(
        @DefaultValue("20s") Duration grace,
        @DefaultValue("5m") Duration handoffTimeout,
        @DefaultValue("10s") Duration interval,
        @DefaultValue("500") int batchSize,
        @DefaultValue("1d") Duration saleLookback,
        @DefaultValue("5m") Duration publishedRecheck,
        @DefaultValue("1m") Duration queuesQuiet,
        @DefaultValue("5s") Duration instanceLease,
        @DefaultValue("1s") Duration leaseCheck) {

    ReconcilerProperties {
        if (grace.isNegative()
                || handoffTimeout.isNegative()
                || interval.isNegative()
                || interval.isZero()
                || saleLookback.isNegative()
                || publishedRecheck.isNegative()
                || queuesQuiet.isNegative()
                || !instanceLease.isPositive()
                || !leaseCheck.isPositive()) {
            throw new IllegalArgumentException("app.reconciler durations must be positive");
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("app.reconciler.batch-size must be at least 1");
        }
    }

    /** The youngest a reservation can be and still be due, whatever its state. */
    Duration earliest() {
        return grace.compareTo(handoffTimeout) < 0 ? grace : handoffTimeout;
    }
}
