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

/**
 * The one place AUTO measures the instance. The purchase paths report here (arrivals, each path's back half,
 * whole answers), and so do both paths' rehearsals (each path's own round trip, measured alike, under the
 * same CPU); the sampler reads the rest (the box's CPU load, the door's refusals, the requests answered, the
 * breakers) and turns it all into the model's {@link CapacityModel.Readings}. Time is the meters' clock: the simulator's, there.
 *
 * <p>What each path costs the CPU is learnt by {@link CpuLearning} from the box's CPU load and steal (all
 * processes, so the broker, Postgres, Redis and the worker count, as in the bench's figure).
 */
final class PathMeasurements {

    private static final String SYNC_LATENCY = "flashsale.purchase.sync.latency";
    private static final String ASYNC_LATENCY = "flashsale.purchase.async.latency";
    private static final String SYNC_ANSWER = "flashsale.purchase.sync.answer";
    private static final String ASYNC_ANSWER = "flashsale.purchase.async.answer";
    private static final String DOOR_REFUSALS = "flashsale.door.refused";
    /** Spring's timer of every HTTP request answered: refusals from memory, line answers and polls included. */
    private static final String HTTP_REQUESTS = "http.server.requests";

    private static final String REHEARSALS = "flashsale.mode.auto.rehearsal";
    /** The offered rate's smoothing: a crowd shows at 63 % within it. */
    private static final Duration RATE_TIME_CONSTANT = Duration.ofMillis(500);

    /** One path's meters and what was learnt of it. */
    private final class Measured {
        final Timer backHalf;
        final Timer answers;
        final Timer rehearsals;
        final LongAdder orders = new LongAdder();
        final CircuitBreaker breaker;
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
            this.breaker = breaker;
            this.rehearsedAt =
                    clock.monotonicTime() - limits.rehearsalInterval().toNanos();
        }
    }

    private final AutoModeProperties limits;
    private final MeterRegistry meters;
    private final Clock clock;
    private final int cores;
    private final CpuLearning cpu;
    private final Map<PurchasePath, Measured> paths = new EnumMap<>(PurchasePath.class);
    private final LongAdder arrivals = new LongAdder();
    private final ArrivalRate offered;

    private long lastReadAt;
    private long arrivalsSeen;
    private double refusalsSeen;
    private long requestsSeen;

    PathMeasurements(
            AutoModeProperties limits,
            MeterRegistry meters,
            CircuitBreaker database,
            CircuitBreaker broker,
            BoxCpu box) {
        this.limits = limits;
        this.meters = meters;
        this.clock = meters.config().clock();
        this.cores = box.cores();
        this.cpu = new CpuLearning(limits, box);
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
                        database));
        paths.put(
                PurchasePath.ASYNC,
                new Measured(
                        PurchasePath.ASYNC,
                        ASYNC_LATENCY,
                        "Time an ASYNC purchase (or a rehearsal of the path) spends being published, confirmed and marked PUBLISHED, the linger apart",
                        ASYNC_ANSWER,
                        "Time from an ASYNC purchase's arrival to its 202, the reservation included",
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
        long requests = requests();
        long newRequests = requests - requestsSeen;
        requestsSeen = requests;
        Measured sync = paths.get(PurchasePath.SYNC);
        Measured async = paths.get(PurchasePath.ASYNC);
        long syncOrders = sync.orders.sum() - sync.ordersSeen;
        long asyncOrders = async.orders.sum() - async.ordersSeen;
        sync.ordersSeen += syncOrders;
        async.ordersSeen += asyncOrders;
        if (seconds > 0) {
            cpu.learn(seconds, newArrivals, newRefusals, syncOrders, asyncOrders, newRequests);
        }
        Measured current = paths.get(carrying);
        return new CapacityModel.Readings(
                offeredPerSecond,
                carrying,
                p50(current.answers),
                roundTrip(current, now),
                cores,
                cpu.steal(),
                cpu.refusalCpuMillis(),
                path(PurchasePath.SYNC, now),
                path(PurchasePath.ASYNC, now));
    }

    private CapacityModel.Path path(PurchasePath mode, long now) {
        Measured measured = paths.get(mode);
        CircuitBreaker.State state = measured.breaker.getState();
        float failureRate = measured.breaker.getMetrics().getFailureRate();
        boolean failing = Breakers.open(measured.breaker)
                || (state == CircuitBreaker.State.CLOSED && failureRate >= limits.errorRateLimit());
        String failure = String.format(
                Locale.ROOT, "breaker %s %s, failure rate %.0f%%", measured.breaker.getName(), state, failureRate);
        return new CapacityModel.Path(roundTrip(measured, now), cpu.cost(mode), failing, failure);
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

    /** What {@code path} costs the CPU, as learnt so far. */
    CpuCost cpuCost(PurchasePath path) {
        return cpu.cost(path);
    }

    private long requests() {
        long sum = 0;
        for (Timer timer : meters.find(HTTP_REQUESTS).timers()) {
            sum += timer.count();
        }
        return sum;
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
