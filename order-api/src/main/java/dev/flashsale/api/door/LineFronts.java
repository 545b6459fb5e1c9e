package dev.flashsale.api.door;

import dev.flashsale.common.stock.SaleLines;
import dev.flashsale.common.stock.SaleLines.Front;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This instance's readings of the fronts of the lines it answers, read again every {@code refresh} on a
 * thread of their own (which also moves a front on once its round has ended), so that a retry with a place
 * is answered without Redis. With each front, the sale's buyers (who hold or held units), read again when
 * their count changed and kept while there are at most {@code maxBuyers}: whether a purchase behind the
 * front may be a replay of an order is then known without Redis too. A line nobody asked about for 10 s, or
 * whose sale has nothing left or held, is no longer read. Gauges {@code flashsale.line{sale,of}}.
 */
final class LineFronts implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LineFronts.class);

    /** A line nobody asked about for this long is no longer read. */
    private static final long IDLE_MILLIS = 10_000;

    /** A front as last read, when a purchase last asked for it, and the sale's buyers (null: not read). */
    private record Reading(
            Front front, long askedMillis, @Nullable Buyers buyers) {

        Reading asked(long millis) {
            return new Reading(front, millis, buyers);
        }
    }

    /** The sale's buyers as read after a front that counted {@code count} of them. */
    private record Buyers(long count, Set<String> shoppers) {}

    private final SaleLines lines;
    private final Duration round;
    private final Clock clock;
    private final LongConsumer forgotten;
    private final int maxBuyers;
    private final Map<Long, Reading> fronts = new ConcurrentHashMap<>();
    private final MultiGauge gauges;
    private final ScheduledExecutorService refresher;

    /**
     * @param maxBuyers the most buyers of a sale kept in memory; a sale with more is asked about each shopper
     * @param forgotten told of each sale whose line is no longer read here
     */
    LineFronts(
            SaleLines lines,
            Duration round,
            Duration refresh,
            int maxBuyers,
            Clock clock,
            MeterRegistry meters,
            LongConsumer forgotten) {
        this.lines = lines;
        this.round = round;
        this.maxBuyers = maxBuyers;
        this.clock = clock;
        this.forgotten = forgotten;
        this.gauges = MultiGauge.builder("flashsale.line")
                .description("A sale's line as this instance last read it: front (places served), next (places"
                        + " handed out), given_up (units places ahead left to the next ones)")
                .register(meters);
        // Its own thread: a slow @Scheduled task elsewhere must not stretch a retry's reading of the front.
        this.refresher = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon().name("sale-line").factory());
        long every = refresh.toNanos();
        refresher.scheduleWithFixedDelay(this::refreshAll, every, every, TimeUnit.NANOSECONDS);
    }

    /** This instance's last reading of the sale's line, if it has one; nothing is read. */
    Optional<Front> known(long saleId) {
        Reading reading = fronts.get(saleId);
        return reading == null ? Optional.empty() : Optional.of(reading.front());
    }

    /** The front of the sale's line: this instance's reading, or read now the first time it is asked. */
    Optional<Front> front(long saleId) {
        Reading reading = fronts.get(saleId);
        if (reading != null) {
            if (clock.millis() - reading.askedMillis() > 1_000) {
                fronts.put(saleId, reading.asked(clock.millis()));
            }
            return Optional.of(reading.front());
        }
        Optional<Front> read = read(saleId);
        read.ifPresent(front -> remember(saleId, front));
        return read;
    }

    void remember(long saleId, Front front) {
        fronts.merge(
                saleId,
                new Reading(front, clock.millis(), null),
                // Readings race (the refresher, each join): the front only moves on, so the larger one is newer.
                (old, now) -> now.front().front() >= old.front().front()
                        ? new Reading(front, now.askedMillis(), old.buyers())
                        : old);
    }

    /**
     * Whether the shopper holds or held units of the sale, as this instance last read its buyers; empty when
     * it has not read them (a line just met, or more than {@code maxBuyers}). A shopper who bought since
     * then is found within a refresh.
     */
    Optional<Boolean> bought(long saleId, String userId) {
        Reading reading = fronts.get(saleId);
        Buyers buyers = reading == null ? null : reading.buyers();
        return buyers == null ? Optional.empty() : Optional.of(buyers.shoppers().contains(userId));
    }

    /** Every line answered from in the last 10 s, read again (and moved on once its round has ended). */
    void refreshAll() {
        long now = clock.millis();
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (Map.Entry<Long, Reading> entry : fronts.entrySet()) {
            long saleId = entry.getKey();
            if (now - entry.getValue().askedMillis() > IDLE_MILLIS) {
                forget(saleId);
                continue;
            }
            try {
                Optional<Front> read = lines.front(saleId, round);
                if (read.isEmpty() || read.get().soldOut(1)) {
                    // No line, or nothing left or held: every purchase is refused SOLD_OUT from memory now,
                    // and a unit that comes back is found by the first purchase that meets its sale again.
                    forget(saleId);
                    continue;
                }
                Front front = read.get();
                Buyers buyers = buyers(saleId, front, entry.getValue().buyers());
                fronts.computeIfPresent(saleId, (id, old) -> new Reading(front, old.askedMillis(), buyers));
                Tags sale = Tags.of("sale", Long.toString(saleId));
                rows.add(MultiGauge.Row.of(sale.and("of", "front"), front.front()));
                rows.add(MultiGauge.Row.of(sale.and("of", "next"), front.next()));
                rows.add(MultiGauge.Row.of(sale.and("of", "given_up"), front.givenUp()));
            } catch (RuntimeException e) {
                // Kept as last read: the front only moves on, so a stale one serves fewer places, never more.
                log.debug("sale {}: line not read: {}", saleId, e.toString());
            }
        }
        gauges.register(rows, true);
    }

    /** The sale's buyers, read again only when the front counts another number of them. */
    private @Nullable Buyers buyers(long saleId, Front front, @Nullable Buyers known) {
        if (front.buyers() < 0 || front.buyers() > maxBuyers) {
            return null;
        }
        if (known != null && known.count() == front.buyers()) {
            return known;
        }
        return new Buyers(front.buyers(), lines.buyers(saleId));
    }

    private void forget(long saleId) {
        fronts.remove(saleId);
        forgotten.accept(saleId);
    }

    /** The sale's line as it stands now, or empty when it has none or Redis cannot tell. */
    Optional<Front> read(long saleId) {
        try {
            return lines.front(saleId, round);
        } catch (RuntimeException redisDown) {
            return Optional.empty();
        }
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }
}
