package dev.flashsale.api.sale;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.rebuild.*: rebuilding a sale's Redis state from Postgres.
 *
 * @param lease how long a rebuild may freeze the sale before its freeze runs out by itself (a rebuild that dies)
 * @param freeze how long purchases stay refused after a rebuild, so orders reserved before the loss and still
 *     in flight (a SYNC commit, a queued ASYNC message) land in Postgres before the units are sold again
 * @param retryAfter the Retry-After of a purchase refused while its sale is rebuilt
 * @param watchInterval how often each instance checks every open sale for a Redis state behind Postgres
 * @param recentlySold a sale with an order this recent whose state Redis lost is rebuilt by the watch at once
 */
@ConfigurationProperties("app.rebuild")
public record RebuildProperties(
        @DefaultValue("15s") Duration lease,
        @DefaultValue("3s") Duration freeze,
        @DefaultValue("1s") Duration retryAfter,
        @DefaultValue("2s") Duration watchInterval,
        @DefaultValue("5m") Duration recentlySold) {}
