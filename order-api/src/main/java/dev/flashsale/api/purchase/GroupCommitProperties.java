package dev.flashsale.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.purchase.sync.* and app.purchase.async.*: the group commit of one path.
 *
 * @param committers round trips in flight at once (transactions, or messages awaiting their confirm)
 * @param maxBatch most items one round trip carries
 * @param maxQueueDelay admission: while the oldest queued item has waited longer, new purchases on this
 *     path are refused (503, or diverted under AUTO) instead of queueing
 * @param maxQueued admission: most items queued at once
 */
public record GroupCommitProperties(
        @DefaultValue("4") int committers,
        @DefaultValue("100") int maxBatch,
        @DefaultValue("20ms") Duration maxQueueDelay,
        @DefaultValue("2000") int maxQueued) {

    public GroupCommitProperties {
        if (committers < 1 || maxBatch < 1 || maxQueued < 1 || !maxQueueDelay.isPositive()) {
            throw new IllegalArgumentException("a group commit needs committers, a batch, a queue and a delay");
        }
    }
}
