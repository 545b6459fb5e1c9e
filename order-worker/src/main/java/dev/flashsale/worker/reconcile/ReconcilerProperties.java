package dev.flashsale.worker.reconcile;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.reconciler.*: settling reservations that nobody finished. A reservation is final within
 * {@code handoffTimeout + interval} (the README's SLO), plus however long Postgres is unreachable.
 *
 * @param grace a SYNC reservation (RESERVED or WRITING) this old is settled: the API writes within its
 *     connection and query timeouts (seconds), so by then its request is over
 * @param handoffTimeout an ASYNC reservation (RESERVED, PUBLISHED or CLAIMED) this old is settled: longer
 *     than a message can still be written by a worker in the normal course, that is the retry budget
 *     (app.worker.max-attempts x app.messaging.retry-delay, plus each attempt's own timeouts); an order
 *     a worker writes later than this finds its FAILED record and changes nothing
 * @param interval pause between two passes (also the delay before the first)
 * @param batchSize reservations read per page (one script call); a pass reads every page of every sale
 * @param saleLookback sales that ended longer ago than this are no longer reconciled
 */
@ConfigurationProperties("app.reconciler")
record ReconcilerProperties(
        @DefaultValue("60s") Duration grace,
        @DefaultValue("5m") Duration handoffTimeout,
        @DefaultValue("10s") Duration interval,
        @DefaultValue("500") int batchSize,
        @DefaultValue("1d") Duration saleLookback) {

    ReconcilerProperties {
        if (grace.isNegative()
                || handoffTimeout.isNegative()
                || interval.isNegative()
                || interval.isZero()
                || saleLookback.isNegative()) {
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
