package dev.flashsale.api.refusal;

import dev.flashsale.common.stock.StockReadings;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Stands in for Redis: every reading of any sale is the one set last (or a failure). */
public final class FixedReadings extends StockReadings {

    /** Sold out, nobody holds units, until a test sets another reading. */
    private volatile @Nullable StockReading next = new StockReading(0L, 0, null, 0, Set.of());

    private volatile int reads;

    public FixedReadings() {
        super(new StringRedisTemplate());
    }

    public void set(@Nullable Long remaining, @Nullable Long frozenUntil, Set<String> buyers) {
        set(remaining, 0, frozenUntil, buyers);
    }

    /** With {@code held} units held by reservations (they may come back). */
    public void set(@Nullable Long remaining, long held, @Nullable Long frozenUntil, Set<String> buyers) {
        next = new StockReading(remaining, held, frozenUntil, buyers.size(), buyers);
    }

    /** Redis cannot be read. */
    public void fail() {
        next = null;
    }

    public int reads() {
        return reads;
    }

    @Override
    public StockReading read(long saleId, long knownBuyers, int maxBuyers) {
        reads++;
        StockReading reading = next;
        if (reading == null) {
            throw new IllegalStateException("Redis is down");
        }
        boolean fresh = reading.buyerCount() != knownBuyers && reading.buyerCount() <= maxBuyers;
        return new StockReading(
                reading.remaining(),
                reading.held(),
                reading.frozenUntil(),
                reading.buyerCount(),
                fresh ? reading.buyers() : null);
    }

    /** Memory over these readings that refreshes only when a test says so (its own refresh is an hour). */
    public KnownRefusals memory(Clock clock, MeterRegistry meters) {
        return new KnownRefusals(this, new KnownRefusalProperties(true, Duration.ofHours(1), 1000), clock, meters);
    }
}
