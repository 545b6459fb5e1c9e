package dev.flashsale.api.door;

import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.door.line.*: a sale's line, for sales with few units (see {@link SaleLine}), and the wait at a
 * full door of the places it serves (see {@link WaitingLine}).
 *
 * @param enabled whether sales with few units are served through their line (off: every purchase meets the
 *     door as it comes, and a full door answers 503 at once)
 * @param maxWait the longest a purchase waits in line before it is refused (503, nothing reserved)
 * @param maxUnits purchases wait only for a sale with at most this many units left: its line ends when it
 *     sells out, while a sale with stock for hours would keep a line of the whole overload
 * @param maxWaiting the most purchases in line at once in this instance (and never more than the sale has
 *     units left: one behind them would get a unit only if one of them failed); beyond it, 503 at once.
 *     Each waits with its connection and buffers: 4,000 of them take about 100 MB
 * @param round the line's front moves on only after the places ahead let a whole round pass without
 *     taking a unit: each served place has at least this long to come back (its window)
 * @param refresh how often an instance reads the front of each line it answered in the last 10 s (and,
 *     once a round has ended, moves it on): a retry with a place is answered from this reading
 * @param comeBackRate places behind the front are told to come back spread by place, about this many a
 *     second, so that a crowd told "when the round ends" does not come back as one
 * @param maxInFlight the most purchases of served places in progress at once in this instance: a fixed
 *     limit, not the door's adaptive one (the line already bounds them to the units left). At most the
 *     SYNC path's bulkhead ({@code sync-db}), which refuses what it has no permit for
 * @param blockWindow once a line reaches past its front, an instance hands places out of a block it takes
 *     in one call, sized for this long of arrivals and used for no longer after the call returned ({@link
 *     PlaceBlocks}): arrivals at two instances are then out of order by at most this much plus that call,
 *     behind the stock (0: a call per arrival)
 */
@Validated
@ConfigurationProperties("app.door.line")
public record WaitingLineProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("3s") Duration maxWait,
        @DefaultValue("10000") @Min(0) long maxUnits,
        @DefaultValue("4000") @Min(0) int maxWaiting,
        @DefaultValue("5s") Duration round,
        @DefaultValue("100ms") Duration refresh,
        @DefaultValue("2000") @Min(1) int comeBackRate,
        @DefaultValue("20ms") Duration blockWindow,
        @DefaultValue("256") @Min(1) int maxInFlight) {}
