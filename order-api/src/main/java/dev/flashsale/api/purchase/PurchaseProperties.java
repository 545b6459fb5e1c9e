package dev.flashsale.api.purchase;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.purchase.*
 *
 * @param confirmTimeout longest wait for the broker's publisher confirm before the reservation is released
 * @param commitTimeout longest wait on the connection of a SYNC batch's transaction, its COMMIT included (the
 *     connection's network timeout): past it the connection is dropped and the commit's outcome looked up.
 *     Above the query timeout, so that a slow statement is cancelled rather than its connection dropped
 * @param pollAfter Retry-After on a 202 and on a QUEUED order
 * @param unavailableRetryAfter Retry-After on a 503
 * @param idempotencyTtl how long an Idempotency-Key stays bound to its order
 * @param replayWait how long a replay waits for the original request to settle before answering 503
 * @param maxPreferWait cap on {@code Prefer: wait=N}
 * @param sync the SYNC path's group commit (one reserve call per sale and one transaction for many purchases)
 * @param async the ASYNC path's group commit (one reserve call per sale, one message and one confirm for many
 *     purchases)
 */
@ConfigurationProperties("app.purchase")
public record PurchaseProperties(
        @DefaultValue("5s") Duration confirmTimeout,
        @DefaultValue("5s") Duration commitTimeout,
        @DefaultValue("1s") Duration pollAfter,
        @DefaultValue("2s") Duration unavailableRetryAfter,
        @DefaultValue("24h") Duration idempotencyTtl,
        @DefaultValue("5s") Duration replayWait,
        @DefaultValue("10s") Duration maxPreferWait,
        @DefaultValue GroupCommitProperties sync,
        @DefaultValue GroupCommitProperties async) {

    public PurchaseProperties {
        if (!commitTimeout.isPositive() || commitTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("app.purchase.commit-timeout must be positive (milliseconds, an int)");
        }
    }
}
