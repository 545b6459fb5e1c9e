package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.DoubleSupplier;

/**
 * The one place AUTO measures the instance. The purchase paths report here (arrivals, each path's back half,
 * whole answers), and so do both paths' rehearsals (each path's own round trip, measured alike, under the
 * same CPU); the sampler reads the rest (the box's CPU load, the door's refusals, the breakers) and turns it
 * all into the model's {@link CapacityModel.Readings}. Time is the meters' clock: the simulator's, there.
 *
 * <p>CPU per order is learnt per path from the box's CPU load: in a sample in which one path carried at
 * least 90 % of the orders, at a rate worth measuring, with nothing refused and the CPU below its target,
 * {@code (busy cores − idle cores) / orders per second} (all processes, so the broker, Postgres, Redis and
 * the worker count, as in the bench's figure). A path not yet learnt costs the learnt one's figure plus the
 * difference of their priors ({@code sync-cpu}, {@code async-cpu}: the bench's).
 */
final class PathMeasurements {

    private static final String SYNC_LATENCY = "flashsale.purchase.sync.latency";
    private static final String ASYNC_LATENCY = "flashsale.purchase.async.latency";
    private static final String SYNC_ANSWER = "flashsale.purchase.sync.answer";
    private static final String ASYNC_ANSWER = "flashsale.purchase.async.answer";
    private static final String DOOR_REFUSALS = "flashsale.door.refused";
    private static final String REHEARSALS = "flashsale.mode.auto.rehearsal";
    /** The offered rate's smoothing: a crowd shows at 63 % within it. */
    private static final Duration RATE_TIME_CONSTANT = Duration.ofMillis(500);
    /** Orders per second below which a sample says nothing of CPU per order. */
    private static final double LEARNING_RATE_FLOOR = 50;
    /** Orders per second below which the box counts as idle (its CPU then is the idle cores). */
    private static final double IDLE_RATE = 2;
    /** Weight of one sample in the learnt figures. */
    private static final double LEARNING_WEIGHT = 0.1;

    /** One path's meters and what was learnt of it. */
    private final class Measured {
        final Timer backHalf;
        final Timer answers;
        final Timer rehearsals;
        final LongAdder orders = new LongAdder();
        final double prior;
        final CircuitBreaker breaker;
        double cpuMillisPerOrder = Double.NaN;
        long ordersSeen;
        double lastRoundTrip = Double.NaN;
        long lastRoundTripAt;
        volatile long rehearsedAt;

        Measured(
                PurchasePath path,
                String latency,
                String latencyHelp,
                String answer,
                String answerHelp,
                double prior,
                CircuitBreaker breaker) {
            this.backHalf = window(latency, latencyHelp);
            this.answers = window(answer, answerHelp);
            this.rehearsals = Timer.builder(REHEARSALS)
                    .description("A rehearsal's round trip: the path's back half for one order, written nowhere")
                    .tag("path", path.name())
                    .publishPercentiles(0.5)
                    .distributionStatisticExpiry(Duration.ofSeconds(5))
                    .distributionStatisticBufferLength(5)
                    .register(meters);
            this.prior = prior;
            this.breaker = breaker;
            this.rehearsedAt =
                    clock.monotonicTime() - limits.rehearsalInterval().toNanos();
        }
    }

    private final AutoModeProperties limits;
    private final MeterRegistry meters;
    private final Clock clock;
    private final DoubleSupplier cpuLoad;
    private final int cores;
    private final Map<PurchasePath, Measured> paths = new EnumMap<>(PurchasePath.class);
    private final LongAdder arrivals = new LongAdder();
    private final ArrivalRate offered;
    private double idleCores;
    /** CPU per purchase refused at the door or by a path (ms), learnt in overload; until then the prior. */
    private double refusalCpuMillis;

    private long lastReadAt;
    private long arrivalsSeen;
    private double refusalsSeen;

    PathMeasurements(
            AutoModeProperties limits,
            MeterRegistry meters,
            CircuitBreaker database,
            CircuitBreaker broker,
            DoubleSupplier cpuLoad,
            int cores) {
        this.limits = limits;
        this.meters = meters;
        this.clock = meters.config().clock();
        this.cpuLoad = cpuLoad;
        this.cores = cores;
        this.refusalCpuMillis = limits.refusalCpu().toNanos() / 1e6;
        this.lastReadAt = clock.monotonicTime();
        this.offered = new ArrivalRate(RATE_TIME_CONSTANT, lastReadAt);
        paths.put(
                PurchasePath.SYNC,
                new Measured(
                        PurchasePath.SYNC,
                        SYNC_LATENCY,
                        "Time a SYNC purchase (or a rehearsal of the path) spends in the database path, the linger apart",
                        SYNC_ANSWER,
                        "Time from a SYNC purchase's arrival to its 201, the reservation included",
                        limits.syncCpu().toNanos() / 1e6,
                        database));
        paths.put(
                PurchasePath.ASYNC,
                new Measured(
                        PurchasePath.ASYNC,
                        ASYNC_LATENCY,
                        "Time an ASYNC purchase (or a rehearsal of the path) spends being published, confirmed and marked PUBLISHED, the linger apart",
                        ASYNC_ANSWER,
                        "Time from an ASYNC purchase's arrival to its 202, the reservation included",
                        limits.asyncCpu().toNanos() / 1e6,
                        broker));
    }

    private Timer window(String name, String description) {
        return Timer.builder(name)
                .description(description)
                .publishPercentiles(0.5, 0.95)
                .distributionStatisticExpiry(Duration.ofSeconds(2))
                .distributionStatisticBufferLength(2)
                .register(meters);
    }

    void arrived() {
        arrivals.increment();
    }

    /** A purchase's back half on {@code path}: it carried an order. */
    void took(PurchasePath path, long nanos) {
        Measured measured = paths.get(path);
        measured.backHalf.record(nanos, TimeUnit.NANOSECONDS);
        measured.orders.increment();
    }

    /** A rehearsal's round trip: the path measured without an order. */
    void rehearsed(PurchasePath path, long nanos) {
        Measured measured = paths.get(path);
        measured.rehearsals.record(nanos, TimeUnit.NANOSECONDS);
        measured.rehearsedAt = clock.monotonicTime();
    }

    void answered(PurchasePath path, long nanos) {
        paths.get(path).answers.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Whether {@code path} was last rehearsed a rehearsal interval ago. */
    boolean rehearsalDue(PurchasePath path) {
        return clock.monotonicTime() - paths.get(path).rehearsedAt
                >= limits.rehearsalInterval().toNanos();
    }

    long now() {
        return clock.monotonicTime();
    }

    /** One sample's readings; {@code carrying} is the path the crowd is on. Only the sampler calls this. */
    CapacityModel.Readings read(PurchasePath carrying) {
        long now = clock.monotonicTime();
        double seconds = (now - lastReadAt) / 1e9;
        lastReadAt = now;
        long arrived = arrivals.sum();
        double refusals = doorRefusals();
        double offeredPerSecond = offered.sample(arrived + (long) refusals, now);
        long newArrivals = arrived - arrivalsSeen;
        double newRefusals = refusals - refusalsSeen;
        arrivalsSeen = arrived;
        refusalsSeen = refusals;
        if (seconds > 0) {
            learn(seconds, newArrivals, newRefusals);
        }
        Measured current = paths.get(carrying);
        return new CapacityModel.Readings(
                offeredPerSecond,
                carrying,
                p50(current.answers),
                roundTrip(current, now),
                cores,
                idleCores,
                refusalCpuMillis,
                path(PurchasePath.SYNC, now),
                path(PurchasePath.ASYNC, now));
    }

    private void learn(double seconds, long newArrivals, double newRefusals) {
        double load = cpuLoad.getAsDouble();
        if (Double.isNaN(load) || load < 0) {
            return;
        }
        double busy = load * cores;
        Measured sync = paths.get(PurchasePath.SYNC);
        Measured async = paths.get(PurchasePath.ASYNC);
        long syncOrders = sync.orders.sum() - sync.ordersSeen;
        long asyncOrders = async.orders.sum() - async.ordersSeen;
        sync.ordersSeen += syncOrders;
        async.ordersSeen += asyncOrders;
        long orders = syncOrders + asyncOrders;
        double rate = orders / seconds;
        if (newArrivals / seconds < IDLE_RATE && newRefusals == 0) {
            idleCores += LEARNING_WEIGHT * (busy - idleCores);
            return;
        }
        Measured carried = syncOrders >= 0.9 * orders ? sync : asyncOrders >= 0.9 * orders ? async : null;
        double refused = Math.max(0, newArrivals + newRefusals - orders) / seconds;
        if (carried != null && !Double.isNaN(carried.cpuMillisPerOrder) && refused >= LEARNING_RATE_FLOOR) {
            // Overload: what the orders did not use went to the refused.
            double perRefusal =
                    Math.max(0, (busy - idleCores - rate * carried.cpuMillisPerOrder / 1000) / refused * 1000);
            refusalCpuMillis += LEARNING_WEIGHT * (perRefusal - refusalCpuMillis);
        }
        if (rate < LEARNING_RATE_FLOOR || newRefusals > 0 || busy >= cores * limits.cpuTarget()) {
            return;
        }
        double perOrder = (busy - idleCores) / rate * 1000;
        if (carried == null || perOrder <= 0) {
            return;
        }
        carried.cpuMillisPerOrder = Double.isNaN(carried.cpuMillisPerOrder)
                ? perOrder
                : carried.cpuMillisPerOrder + LEARNING_WEIGHT * (perOrder - carried.cpuMillisPerOrder);
    }

    private CapacityModel.Path path(PurchasePath mode, long now) {
        Measured measured = paths.get(mode);
        CircuitBreaker.State state = measured.breaker.getState();
        float failureRate = measured.breaker.getMetrics().getFailureRate();
        boolean failing = Breakers.open(measured.breaker)
                || (state == CircuitBreaker.State.CLOSED && failureRate >= limits.errorRateLimit());
        String failure = String.format(
                Locale.ROOT, "breaker %s %s, failure rate %.0f%%", measured.breaker.getName(), state, failureRate);
        return new CapacityModel.Path(roundTrip(measured, now), cpuMillisPerOrder(mode), failing, failure);
    }

    /** The rehearsals' median, or their last one within the evidence TTL (rehearsals failing), else NaN. */
    private double roundTrip(Measured measured, long now) {
        double roundTrip = p50(measured.rehearsals);
        if (!Double.isNaN(roundTrip)) {
            measured.lastRoundTrip = roundTrip;
            measured.lastRoundTripAt = now;
            return roundTrip;
        }
        return now - measured.lastRoundTripAt <= limits.evidenceTtl().toNanos() ? measured.lastRoundTrip : Double.NaN;
    }

    /** The learnt figure; a path not learnt yet costs the other's learnt figure plus the priors' difference. */
    double cpuMillisPerOrder(PurchasePath mode) {
        Measured measured = paths.get(mode);
        if (!Double.isNaN(measured.cpuMillisPerOrder)) {
            return measured.cpuMillisPerOrder;
        }
        Measured other = paths.get(mode == PurchasePath.SYNC ? PurchasePath.ASYNC : PurchasePath.SYNC);
        return Double.isNaN(other.cpuMillisPerOrder)
                ? measured.prior
                : Math.max(0.01, other.cpuMillisPerOrder + measured.prior - other.prior);
    }

    private double doorRefusals() {
        double sum = 0;
        for (Counter counter : meters.find(DOOR_REFUSALS).counters()) {
            sum += counter.count();
        }
        return sum;
    }

    /**
     * The window's median in ms; NaN when nothing was recorded in the window (the snapshot then shows 0: no
     * purchase takes 0 ns).
     */
    private static double p50(Timer window) {
        for (ValueAtPercentile percentile : window.takeSnapshot().percentileValues()) {
            if (percentile.percentile() == 0.5) {
                double value = percentile.value(TimeUnit.MILLISECONDS);
                return value > 0 ? value : Double.NaN;
            }
        }
        return Double.NaN;
    }
}
