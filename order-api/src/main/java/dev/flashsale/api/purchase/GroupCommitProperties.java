package dev.flashsale.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.purchase.sync.* and app.purchase.async.*: the group commit of one path.
 *
 * @param committers round trips in flight at once (transactions, or messages awaiting their confirm)
 * @param maxBatch most items one round trip carries
 * @param maxQueueDelay the path limit: the queueing delay this path aims to stay under
 * @param shedAfter the path limit: once the oldest queued item has been older than maxQueueDelay for this long
 *     (a standing queue, not a burst), new purchases on this path are refused (503, or diverted under
 *     AUTO) instead of queueing
 * @param maxQueued the path limit: most items queued at once
 * @param linger how long a round trip waits, from its first item's arrival, for more items to go along
 *     (0: none; batches then grow only while every round is busy). A purchase that arrives after a quiet
 *     spell longer than this commits at once on its own thread: nothing is likely to join it
 * @param maxWait longest a request waits for the round trip that carries its item, queueing included: past
 *     it the request stops waiting and decides its order's fate itself (see {@link GroupCommit#submit}). A
 *     lone request that commits on its own thread is bounded by the dependency's own timeouts instead
 */
public record GroupCommitProperties(
        @DefaultValue("4") int committers,
        @DefaultValue("100") int maxBatch,
        @DefaultValue("20ms") Duration maxQueueDelay,
        @DefaultValue("100ms") Duration shedAfter,
        @DefaultValue("2000") int maxQueued,
        @DefaultValue("0ms") Duration linger,
        @DefaultValue("10s") Duration maxWait) {

    public GroupCommitProperties {
        if (committers < 1
                || maxBatch < 1
                || maxQueued < 1
                || !maxQueueDelay.isPositive()
                || shedAfter.isNegative()
                || linger.isNegative()
                || !maxWait.isPositive()) {
            throw new IllegalArgumentException("a group commit needs committers, a batch, a queue, a delay and a wait");
        }
    }
}
