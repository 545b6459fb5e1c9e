package dev.flashsale.api.mode;

import dev.flashsale.api.door.DoorProperties;
import dev.flashsale.common.order.PurchasePath;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * AUTO's controller, one per API instance. Several times a second it reads the instance ({@link
 * PathMeasurements}), asks the {@link CapacityModel} which path should carry the crowd, and moves it: at
 * once for a failing dependency; after 2 samples in a row for a path short of capacity; for an answer out
 * of (or back in) the objective after {@code samples-to-async} (to ASYNC, a trickle's samples not counted)
 * or {@code samples-to-sync} (back to SYNC, SYNC meeting the larger return headroom all along) samples in a
 * row, and only once the last move is {@code min-time-between-switches} old. On engagement it starts on the
 * model's choice of that moment.
 */
@Component
class ModelAutoPilot implements AutoPilot {

    private static final Logger log = LoggerFactory.getLogger(ModelAutoPilot.class);
    /** Samples in a row the model must find the crowd's path short of capacity before it moves. */
    private static final int CAPACITY_SAMPLES = 2;
    /**
     * Offered purchases per second of a trickle, from idle (under 2/s) to a crowd (50/s): no sample of a
     * trickle counts towards a move to ASYNC for its answer. Idle, a move costs nothing; under a crowd, the
     * answer it gains is worth the switch; a trickle (a crowd arriving or leaving) gains nothing and still
     * pays the switch. In the simulator, a crowd as it left kept SYNC's slowest answers in the window while
     * the rate fell, and moved it.
     */
    private static final double TRICKLE_FROM = 2;

    private static final double TRICKLE_TO = 50;

    private final AutoModeProperties limits;
    private final CapacityModel model;
    private final PathMeasurements measurements;
    private final MeterRegistry meters;
    private final Clock clock;
    private volatile boolean engaged;
    /** Set on engagement: the next sample takes the model's choice at once. */
    private volatile boolean restart;

    private volatile PurchasePath recommended = PurchasePath.SYNC;
    private volatile @Nullable Switch lastSwitch;
    private volatile double pressure;
    private final double[] capacity = new double[2];
    /** Each path's CPU line as the last sample priced it: fixed cores, and ms per order. */
    private final double[] fixedCores = new double[2];

    private final double[] millisPerOrder = new double[2];
    private int streak;
    private long switchedAt;

    @Autowired
    ModelAutoPilot(
            AutoModeProperties limits,
            DoorProperties door,
            CircuitBreakerRegistry breakers,
            MeterRegistry meters,
            Clock clock) {
        this(limits, door, breakers, meters, clock, BoxCpu.ofTheBox());
    }

    ModelAutoPilot(
            AutoModeProperties limits,
            DoorProperties door,
            CircuitBreakerRegistry breakers,
            MeterRegistry meters,
            Clock clock,
            BoxCpu box) {
        this.limits = limits;
        this.model = new CapacityModel(limits, door.target().toNanos() / 1e6, door.minLimit());
        this.measurements = new PathMeasurements(
                limits, meters, breakers.circuitBreaker("postgres"), breakers.circuitBreaker("broker"), box);
        this.meters = meters;
        this.clock = clock;
        this.switchedAt = measurements.now() - limits.minTimeBetweenSwitches().toNanos();
        Gauge.builder("flashsale.mode.auto.pressure", this, pilot -> pilot.pressure)
                .description("The offered rate against the capacity of the path carrying it (1: at capacity)")
                .register(meters);
        Gauge.builder("flashsale.mode.auto.recommended", this, pilot -> pilot.recommended == PurchasePath.ASYNC ? 1 : 0)
                .description("The path AUTO recommends: 0 SYNC, 1 ASYNC")
                .register(meters);
        for (PurchasePath path : PurchasePath.values()) {
            Gauge.builder("flashsale.mode.auto.capacity", capacity, c -> c[path.ordinal()])
                    .description("Purchases per second the path could carry at the latency objective, by AUTO's model")
                    .tag("path", path.name())
                    .register(meters);
            Gauge.builder("flashsale.mode.auto.cpu.fixed", fixedCores, c -> c[path.ordinal()])
                    .description("The cores AUTO's CPU line for the path puts at any rate, all processes (learnt)")
                    .tag("path", path.name())
                    .register(meters);
            Gauge.builder("flashsale.mode.auto.cpu.per.order", millisPerOrder, c -> c[path.ordinal()])
                    .description("The CPU ms per order of AUTO's CPU line for the path, all processes (learnt)")
                    .tag("path", path.name())
                    .register(meters);
        }
    }

    @Override
    public PurchasePath recommended() {
        return recommended;
    }

    @Override
    public void arrived() {
        measurements.arrived();
    }

    @Override
    public void syncTook(long nanos) {
        measurements.took(PurchasePath.SYNC, nanos);
    }

    @Override
    public void asyncTook(long nanos) {
        measurements.took(PurchasePath.ASYNC, nanos);
    }

    @Override
    public void answered(PurchasePath path, long nanos) {
        measurements.answered(path, nanos);
    }

    /** A rehearsal of {@code path} took this long (see {@link PathRehearsals}). */
    void rehearsed(PurchasePath path, long nanos) {
        measurements.rehearsed(path, nanos);
    }

    /** Whether {@code path} is due for a rehearsal. */
    boolean rehearsalDue(PurchasePath path) {
        return measurements.rehearsalDue(path);
    }

    @Override
    public Optional<Switch> lastSwitch() {
        return Optional.ofNullable(lastSwitch);
    }

    @Override
    public void engage(boolean engaged) {
        if (engaged && !this.engaged) {
            restart = true;
        }
        this.engaged = engaged;
    }

    @Scheduled(fixedRateString = "${app.mode.auto.sample-interval:200ms}")
    void sample() {
        PurchasePath current = recommended;
        CapacityModel.Readings readings = measurements.read(current);
        CapacityModel.Estimate sync = model.estimate(PurchasePath.SYNC, readings);
        CapacityModel.Estimate async = model.estimate(PurchasePath.ASYNC, readings);
        capacity[PurchasePath.SYNC.ordinal()] = sync.capacity();
        capacity[PurchasePath.ASYNC.ordinal()] = async.capacity();
        for (PurchasePath path : PurchasePath.values()) {
            CpuCost cost = readings.of(path).cpu();
            fixedCores[path.ordinal()] = cost.fixedCores();
            millisPerOrder[path.ordinal()] = cost.millisPerOrder();
        }
        double carrying = current == PurchasePath.SYNC ? sync.capacity() : async.capacity();
        pressure = carrying > 0 ? readings.offeredPerSecond() / carrying : 1;
        if (!engaged) {
            streak = 0;
            return;
        }
        CapacityModel.Choice choice = model.choose(readings, current);
        long now = measurements.now();
        if (restart) {
            restart = false;
            streak = 0;
            if (choice.path() != current) {
                move(choice, now, "engaged: ");
            }
            return;
        }
        boolean forAnswer = choice.why() == CapacityModel.Why.ANSWER && choice.path() == PurchasePath.ASYNC;
        double offered = readings.offeredPerSecond();
        if (choice.path() == current || (forAnswer && offered >= TRICKLE_FROM && offered < TRICKLE_TO)) {
            streak = 0;
            return;
        }
        streak++;
        boolean dwelt = now - switchedAt >= limits.minTimeBetweenSwitches().toNanos();
        boolean due = switch (choice.why()) {
            case FAILING -> true;
            // A path that cannot carry the crowd builds a queue every sample: no dwell.
            case CAPACITY -> streak >= CAPACITY_SAMPLES;
            case ANSWER ->
                dwelt
                        && streak
                                >= (choice.path() == PurchasePath.ASYNC
                                        ? limits.samplesToAsync()
                                        : limits.samplesToSync());
        };
        if (due) {
            move(choice, now, "");
        }
    }

    private void move(CapacityModel.Choice choice, long now, String prefix) {
        streak = 0;
        switchedAt = now;
        recommended = choice.path();
        lastSwitch = new Switch(clock.instant(), choice.path(), prefix + choice.reason());
        meters.counter("flashsale.mode.auto.switches", "to", choice.path().name())
                .increment();
        log.info("AUTO switched to {}: {}{}", choice.path(), prefix, choice.reason());
    }
}
