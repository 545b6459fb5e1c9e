package dev.flashsale.api.refusal;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.common.stock.StockReadings;
import dev.flashsale.common.stock.StockReadings.StockReading;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * What this instance knows about a sale that decides a purchase without asking anyone: its window (a
 * sale's definition never changes) and, once it has seen the sale sold out, that it still is.
 *
 * <p>It learns "sold out" from its own reserve results at once, and from the other instances through
 * Redis: the first purchase it sends after another instance sold the last unit comes back SOLD_OUT. It
 * then reads the sale every {@code refresh} (one pipelined round trip per sale) and unlearns it as soon
 * as units are back, whoever gave them back: a belief is never older than two refreshes and a round
 * trip. A belief that decided no purchase for 10 s is dropped, so a sale nobody asks about costs no reads. A purchase with an Idempotency-Key may be a replay of an order, which must get its order, so it
 * is refused from memory only when its shopper holds no order in the sale; the others ask Redis.
 */
@Component
public class KnownRefusals implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(KnownRefusals.class);

    /** Shared: a refusal carries no stack trace and nothing of the request. */
    private static final ApiProblem SOLD_OUT_PROBLEM = ApiProblem.refused(ProblemCode.SOLD_OUT);

    private static final ApiProblem NOT_ACTIVE_PROBLEM = ApiProblem.refused(ProblemCode.SALE_NOT_ACTIVE);

    /**
     * A sale's window and limit, from its definition, the units it had left when last seen, and when a
     * belief about it last decided a purchase (a belief nobody asks about is not worth reading).
     */
    private record Facts(long startsAt, long endsAt, int perUserLimit, AtomicLong left, AtomicLong asked) {}

    /** A sold-out belief that decided nothing for this long is dropped: the next purchase asks Redis. */
    private static final long IDLE_MILLIS = 10_000;

    /**
     * At most {@code remaining} units are left, and reservations hold {@code held} more that may come back
     * (-1: not read yet), so a quantity above their sum is refused; these shoppers hold or held units
     * ({@code buyers} null: not known yet, every keyed purchase asks Redis). SOLD_OUT is final to a
     * shopper: while a held unit could make up the quantity, or before the held units are read, nothing is
     * refused from memory.
     */
    private record Belief(
            long remaining,
            long held,
            long buyerCount,
            @Nullable Set<String> buyers) {

        boolean refuses(long quantity) {
            return held >= 0 && quantity > remaining + held;
        }
    }

    private final Map<Long, Facts> sales = new ConcurrentHashMap<>();
    private final Map<Long, Belief> beliefs = new ConcurrentHashMap<>();
    private final StockReadings readings;
    private final KnownRefusalProperties properties;
    private final Clock clock;
    private final Counter soldOut;
    private final Counter notActive;
    private final ScheduledExecutorService refresher;

    public KnownRefusals(StockReadings readings, KnownRefusalProperties properties, Clock clock, MeterRegistry meters) {
        this.readings = readings;
        this.properties = properties;
        this.clock = clock;
        this.soldOut = counter(meters, ProblemCode.SOLD_OUT);
        this.notActive = counter(meters, ProblemCode.SALE_NOT_ACTIVE);
        meters.gauge("flashsale.refusals.known.sold.out.sales", beliefs, Map::size);
        // Its own thread: a slow @Scheduled task elsewhere must not stretch the bound on a belief.
        this.refresher = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon().name("known-refusals").factory());
        long every = properties.refresh().toNanos();
        refresher.scheduleWithFixedDelay(this::refreshAll, every, every, TimeUnit.NANOSECONDS);
    }

    private static Counter counter(MeterRegistry meters, ProblemCode code) {
        return Counter.builder("flashsale.refusals.known")
                .description("Purchases refused from this instance's memory, without Redis, the door or the throttle")
                .tag("code", code.code())
                .register(meters);
    }

    /**
     * Remembers a sale's definition (its window, per-user limit and stock), once; also when refusals from
     * memory are off, for the door's line ({@link #unitsLeft}).
     */
    public void know(long saleId, Instant startsAt, Instant endsAt, int perUserLimit, long stock) {
        if (!sales.containsKey(saleId)) {
            sales.putIfAbsent(
                    saleId,
                    new Facts(
                            startsAt.toEpochMilli(),
                            endsAt.toEpochMilli(),
                            perUserLimit,
                            new AtomicLong(stock),
                            new AtomicLong(clock.millis())));
        }
    }

    /**
     * The units the sale had left when this instance last reserved one of them (at first its stock), or
     * -1 for a sale it has not looked up yet: for the door, which lets purchases of a sale with few units
     * wait in line.
     */
    public long unitsLeft(long saleId) {
        Facts facts = sales.get(saleId);
        return facts == null ? -1 : facts.left().get();
    }

    /** Whether this instance has looked the sale up ({@link #know}): its definition is cached. */
    public boolean knows(long saleId) {
        return sales.containsKey(saleId);
    }

    /** The most buyers of one sale whose names an instance keeps in memory (app.known-refusals.max-buyers). */
    public int maxBuyers() {
        return properties.maxBuyers();
    }

    /**
     * The refusal this purchase gets without asking Redis, or null when only Redis can decide it. Counted
     * here: a refusal from memory is no load, and neither the door nor AUTO sees it.
     */
    public @Nullable ApiProblem refusal(long saleId, String userId, int quantity, boolean keyed) {
        Facts facts = properties.enabled() ? sales.get(saleId) : null;
        if (facts == null || quantity > facts.perUserLimit()) {
            return null;
        }
        long now = clock.millis();
        if (now < facts.startsAt() || (now >= facts.endsAt() && !keyed)) {
            // Before the start nobody holds an order; after the end a keyed purchase may be a replay.
            notActive.increment();
            return NOT_ACTIVE_PROBLEM;
        }
        Belief belief = beliefs.get(saleId);
        if (belief == null || !belief.refuses(quantity) || now >= facts.endsAt()) {
            return null;
        }
        facts.asked().lazySet(now);
        if (keyed) {
            Set<String> buyers = belief.buyers();
            if (buyers == null || buyers.contains(userId)) {
                return null;
            }
        }
        soldOut.increment();
        return SOLD_OUT_PROBLEM;
    }

    /**
     * Whether this instance refuses every purchase of the sale from memory now (not open, or sold out),
     * so that the door lets them by: they cost what a ping costs. Keyed purchases of shoppers with an
     * order still ask Redis; there are at most as many as the sale had units.
     */
    public boolean refusesEveryone(long saleId) {
        Facts facts = properties.enabled() ? sales.get(saleId) : null;
        if (facts == null) {
            return false;
        }
        long now = clock.millis();
        if (now < facts.startsAt() || now >= facts.endsAt()) {
            return true;
        }
        Belief belief = beliefs.get(saleId);
        return belief != null && belief.refuses(1);
    }

    /** A reservation succeeded and left {@code remaining} units. */
    public void reserved(long saleId, long remaining) {
        Facts facts = sales.get(saleId);
        if (facts == null) {
            return;
        }
        facts.left().set(remaining);
        if (!properties.enabled()) {
            return;
        }
        if (remaining >= facts.perUserLimit()) {
            beliefs.remove(saleId);
        } else {
            believe(saleId, remaining, -1); // this reservation is held itself: not final before a reading
        }
    }

    /**
     * Redis refused {@code quantity} units as SOLD_OUT: fewer than that are left, held units counted (the
     * reserve script answers SOLD_OUT only when no held unit could make the quantity up).
     */
    public void refusedSoldOut(long saleId, int quantity) {
        if (properties.enabled() && sales.containsKey(saleId)) {
            believe(saleId, quantity - 1L, 0);
        }
    }

    private void believe(long saleId, long remaining, long held) {
        Belief before = beliefs.get(saleId);
        if (before != null && before.remaining() <= remaining && (held < 0 || before.held() == held)) {
            return;
        }
        Facts facts = sales.get(saleId);
        if (facts != null) {
            facts.asked().lazySet(clock.millis());
        }
        Belief learnt = beliefs.compute(
                saleId,
                (id, old) -> old == null
                        ? new Belief(remaining, held, -1, null)
                        : new Belief(
                                Math.min(old.remaining(), remaining),
                                held < 0 ? old.held() : held,
                                old.buyerCount(),
                                old.buyers()));
        if (before == null && learnt.buyers() == null) {
            // Read who holds units now, so that keyed purchases are refused from memory too.
            refresher.execute(() -> refresh(saleId));
        }
    }

    /** Every sale believed sold out, read again; a belief the reading does not confirm is dropped. */
    void refreshAll() {
        for (Long saleId : beliefs.keySet()) {
            refresh(saleId);
        }
    }

    private void refresh(long saleId) {
        Belief belief = beliefs.get(saleId);
        Facts facts = sales.get(saleId);
        if (belief == null) {
            return;
        }
        StockReading reading;
        try {
            reading = readings.read(saleId, belief.buyerCount(), properties.maxBuyers());
        } catch (RuntimeException e) {
            // Unconfirmed beliefs are not kept: purchases ask Redis (and meet its answer, or a 503).
            beliefs.remove(saleId);
            log.debug("sale {}: sold-out belief dropped, Redis not read: {}", saleId, e.toString());
            return;
        }
        Long remaining = reading.remaining();
        Long frozenUntil = reading.frozenUntil();
        boolean frozen = frozenUntil != null && frozenUntil > clock.millis();
        long now = clock.millis();
        if (facts == null
                || remaining == null
                || frozen
                || remaining >= facts.perUserLimit()
                || now >= facts.endsAt()
                || now - facts.asked().get() > IDLE_MILLIS) {
            beliefs.remove(saleId);
            return;
        }
        beliefs.computeIfPresent(saleId, (id, old) -> {
            Set<String> buyers = reading.buyers();
            if (buyers == null && old.buyerCount() == reading.buyerCount()) {
                buyers = old.buyers();
            }
            return new Belief(remaining, reading.held(), buyers == null ? -1 : reading.buyerCount(), buyers);
        });
    }

    @Override
    public void destroy() {
        refresher.shutdownNow();
    }
}
