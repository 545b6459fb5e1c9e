package dev.flashsale.api.mode;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import dev.flashsale.common.order.PurchaseMode;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * AUTO's controller, one per API instance. It measures both paths — the sliding-window p95 of the time
 * each adds after the reservation, less the group commit's linger (a wait on purpose that either path pays
 * alike under traffic, and that a lone probe or rehearsal never pays, so that with it the path carrying the
 * traffic would always look the slower) — and keeps the path it did not choose measured by sending it every
 * purchase per {@code probe-interval}, a small share of the traffic: a probe of a slow path is slow, and at
 * 5 % of the purchases the probes alone set AUTO's p99. Several times a second it feeds the {@link Hysteresis}:
 *
 * <ul>
 *   <li>in SYNC, the pressure is the largest of: SYNC's p95 against ASYNC's (1.0 when SYNC is
 *       {@code switch-ratio} times slower), sync requests in flight against the bulkhead, threads waiting
 *       for a pooled connection, the database breaker's failure rate;
 *   <li>in ASYNC, a probe sees SYNC unloaded, so its latency says only whether SYNC is healthy, not
 *       whether it would cope with the crowd. The crowd is measured instead: the arrival rate against the
 *       rate at which SYNC gave way. AUTO returns to SYNC when that has halved and SYNC's probes are within
 *       {@code return-ratio} of ASYNC's.
 * </ul>
 *
 * Below {@code latency-floor} both paths count as equally fast, and SYNC — a final answer at once — wins.
 *
 * <p>A path that no purchase took for a {@code probe-interval} (no traffic, or a forced mode that runs the
 * other path) is measured by its idle probe: its back half rehearsed without a shopper ({@link
 * PathRehearsal}). So in a lull both paths are measured unloaded and compared like for like, and AUTO in
 * ASYNC does not return to SYNC because nobody probed SYNC. Should the rehearsals fail too, a path's last
 * p95 stands for it for {@code evidence-ttl}. On engagement AUTO starts from the better path by the lowest
 * p95 each showed within the TTL (its own cost, such as a slow downstream, without the queue of a burst
 * that has passed), not from SYNC every time.
 *
 * <p>The back halves compare what each path adds, not what the crowd costs the box. A probe of ASYNC is
 * one message; ASYNC carrying the crowd may cost more than SYNC did (on one box with the broker and
 * worker, it does: CPU, not the database, is then the bottleneck), and every purchase's reservation slows
 * with it. So each switch to ASYNC is checked: once ASYNC has carried the crowd for {@link #SETTLE}, the
 * p95 of its whole answers (arrival to 202) is compared with SYNC's whole answers (arrival to 201) at the
 * switch, as long as the crowd is no more than {@link #COMPARABLE_CROWD} times the one SYNC carried then
 * (a larger crowd is no evidence about SYNC: on a slow database, SYNC would fare worse still). ASYNC no
 * faster returns to SYNC at once, and AUTO keeps the lesson for {@code lesson-ttl}:
 * while it stands, latency moves AUTO to ASYNC again only when SYNC's whole answers are also
 * {@code switch-ratio} times slower than ASYNC's were under the crowd. A database that slows down
 * meanwhile still does; the crowd that ASYNC did not help with does not.
 *
 * <p>Before latency alone moves a crowd to ASYNC, AUTO tries it: for {@link #SETTLE}, one purchase in
 * {@code 1 / trial-share} takes ASYNC while the rest stay in SYNC, so both paths' whole answers are measured
 * under the same crowd at the same time, not one path's now against the other's earlier. SYNC's answers
 * {@code switch-ratio} times ASYNC's move the crowd (a quarter of it on ASYNC is a lighter load than all of
 * it, so the move asks for the margin the back halves did); otherwise AUTO stays in SYNC and keeps ASYNC's
 * answers as the lesson, as if it had switched and come back, without the crowd paying for the round trip.
 * A bulkhead, pool or breaker at its limit is no question of speed: it moves the crowd at once, also in the
 * middle of a trial.
 */
@Component
class PressureAutoPilot implements AutoPilot {

    private static final Logger log = LoggerFactory.getLogger(PressureAutoPilot.class);
    static final String SYNC_LATENCY = "flashsale.purchase.sync.latency";
    static final String ASYNC_LATENCY = "flashsale.purchase.async.latency";
    /** The arrival rate's smoothing: a crowd shows at 63 % within it, and a trickle reads as its rate. */
    private static final Duration RATE_TIME_CONSTANT = Duration.ofSeconds(1);

    static final String SYNC_ANSWER = "flashsale.purchase.sync.answer";
    static final String ASYNC_ANSWER = "flashsale.purchase.async.answer";
    /**
     * SYNC's answers at the switch say how SYNC coped with the crowd of then, not with a larger one: ASYNC is
     * judged against them only while the arrival rate (its peak within the answer windows) is at most this
     * multiple of the rate at the switch.
     */
    static final double COMPARABLE_CROWD = 1.25;

    /**
     * How long ASYNC carries the crowd before its answers are judged: longer than the p95 windows (2 s), so
     * that ASYNC's window holds its answers under the crowd, not the odd probe from before the switch.
     */
    static final Duration SETTLE = Duration.ofMillis(2500);

    /**
     * What AUTO knows of a path (ms; instants from System.nanoTime): the last window p95 it had (this
     * sample's while the path takes purchases), and the lowest it showed lately: the path's own cost,
     * without a burst's queue.
     */
    private record Evidence(double last, long lastAt, double best, long bestAt) {
        static final Evidence NONE = new Evidence(Double.NaN, 0, Double.NaN, 0);
    }

    /**
     * What AUTO learned from a switch to ASYNC that did not pay: the p95 of ASYNC's whole answers under the
     * crowd (ms), and when (System.nanoTime).
     */
    private record Lesson(double asyncAnswerP95, long at) {
        static final Lesson NONE = new Lesson(Double.NaN, 0);
    }

    /**
     * One sample; a path's p95 is NaN when it has no measurement younger than the evidence TTL. The answer
     * p95s are the whole purchases' of the last window (NaN when the path answered none).
     */
    record Signals(
            double inFlight,
            int poolWaiters,
            int poolActive,
            double syncP95Millis,
            double asyncP95Millis,
            double failureRate,
            double rate,
            double syncAnswerP95Millis,
            double asyncAnswerP95Millis) {}

    private final AutoModeProperties limits;
    private Hysteresis hysteresis;
    private volatile boolean engaged;
    /** Set on engagement: the sampler restarts its hysteresis from the mode chosen then. */
    private volatile boolean restart;

    private final Bulkhead bulkhead;
    private final CircuitBreaker database;
    private final @Nullable HikariDataSource pool;
    private final Timer syncLatency;
    private final Timer asyncLatency;
    private final Timer syncAnswer;
    private final Timer asyncAnswer;
    private final AtomicLong lastProbe;
    private final MeterRegistry meters;
    private final Clock clock;
    private final IdleProbe syncIdle;
    private final IdleProbe asyncIdle;
    private final LongAdder arrivals = new LongAdder();
    private volatile PurchaseMode recommended = PurchaseMode.SYNC;
    private volatile @Nullable Switch lastSwitch;
    private volatile double pressure;
    /**
     * The crowd's rate when SYNC gave way. The smoothed rate lags a sudden crowd (63 % after one time
     * constant), so for three time constants after the switch it follows the rate up.
     */
    private double rateAtSwitch;

    private long switchedAtNanos;
    /**
     * The highest arrival rate of about the last {@link #SETTLE}: the crowd the answer windows hold answers
     * of. The smoothed rate falls within a second or two of a crowd leaving, while its late answers are
     * still in the windows.
     */
    private double crowdPeak;

    private long crowdPeakAt;
    private volatile Evidence syncEvidence = Evidence.NONE;
    private volatile Evidence asyncEvidence = Evidence.NONE;
    /** SYNC's whole answers as measured lately: the reference ASYNC is judged against. */
    private volatile Evidence syncAnswerEvidence = Evidence.NONE;
    /** SYNC's whole-answer p95 when AUTO last moved to ASYNC (its last within the TTL): what ASYNC must beat. */
    private double syncAnswerAtSwitch = Double.NaN;

    private volatile Lesson lesson = Lesson.NONE;
    /** While a trial runs, one purchase in this many takes ASYNC; 0: no trials. */
    private final long trialEvery;

    private final AtomicLong trialTurns = new AtomicLong();
    private volatile boolean trialing;
    private long trialStartedAt;
    /** What started the running trial, for the switch's reason. */
    private String trialCause = "";

    private final ArrivalRate rate;
    /** Monotonic time, the meters' own: System.nanoTime in production, a simulated clock in the simulator. */
    private final io.micrometer.core.instrument.Clock ticker;

    PressureAutoPilot(
            AutoModeProperties limits,
            BulkheadRegistry bulkheads,
            CircuitBreakerRegistry breakers,
            DataSource dataSource,
            MeterRegistry meters,
            Clock clock,
            PathRehearsal rehearsal) {
        this.ticker = meters.config().clock();
        this.lastProbe = new AtomicLong(ticker.monotonicTime());
        this.switchedAtNanos = ticker.monotonicTime() - 3 * RATE_TIME_CONSTANT.toNanos();
        this.rate = new ArrivalRate(RATE_TIME_CONSTANT, ticker.monotonicTime());
        this.limits = limits;
        this.hysteresis = new Hysteresis(limits);
        this.trialEvery = limits.trialShare() > 0 ? Math.max(1, Math.round(1 / limits.trialShare())) : 0;
        this.bulkhead = bulkheads.bulkhead("sync-db");
        this.database = breakers.circuitBreaker("postgres");
        this.pool = unwrap(dataSource);
        this.meters = meters;
        this.clock = clock;
        this.syncLatency = window(
                SYNC_LATENCY,
                "Time a SYNC purchase (or AUTO's idle probe of the path) spends in the database path",
                meters);
        this.asyncLatency = window(
                ASYNC_LATENCY,
                "Time an ASYNC purchase (or AUTO's idle probe of the path) spends being published, confirmed and handed over",
                meters);
        this.syncAnswer =
                window(SYNC_ANSWER, "Time from a SYNC purchase's arrival to its 201, the reservation included", meters);
        this.asyncAnswer = window(
                ASYNC_ANSWER, "Time from an ASYNC purchase's arrival to its 202, the reservation included", meters);
        this.syncIdle = new IdleProbe(PurchaseMode.SYNC, syncLatency, rehearsal::sync);
        this.asyncIdle = new IdleProbe(PurchaseMode.ASYNC, asyncLatency, rehearsal::async);
        meters.gauge("flashsale.mode.auto.pressure", this, pilot -> pilot.pressure);
        meters.gauge("flashsale.mode.auto.recommended", this, pilot -> pilot.recommended == PurchaseMode.ASYNC ? 1 : 0);
        meters.gauge("flashsale.mode.auto.trial", this, pilot -> pilot.trialing ? 1 : 0);
    }

    private static Timer window(String name, String description, MeterRegistry meters) {
        return Timer.builder(name)
                .description(description)
                .publishPercentiles(0.95)
                .distributionStatisticExpiry(Duration.ofSeconds(2))
                .distributionStatisticBufferLength(2)
                .register(meters);
    }

    @Override
    public PurchaseMode recommended() {
        return recommended;
    }

    /**
     * The recommended path, except that one purchase per {@code probe-interval} measures the other one, and
     * that during a trial one in {@code 1 / trial-share} takes ASYNC.
     */
    @Override
    public PurchaseMode route() {
        PurchaseMode chosen = recommended;
        if (trialing && chosen == PurchaseMode.SYNC && trialTurns.incrementAndGet() % trialEvery == 0) {
            return PurchaseMode.ASYNC;
        }
        long interval = limits.probeInterval().toNanos();
        long now = ticker.monotonicTime();
        long last = lastProbe.get();
        if (interval > 0 && now - last >= interval && lastProbe.compareAndSet(last, now)) {
            return chosen == PurchaseMode.SYNC ? PurchaseMode.ASYNC : PurchaseMode.SYNC;
        }
        return chosen;
    }

    @Override
    public Optional<Switch> lastSwitch() {
        return Optional.ofNullable(lastSwitch);
    }

    @Override
    public void arrived() {
        arrivals.increment();
    }

    @Override
    public void syncTook(long nanos) {
        syncLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void asyncTook(long nanos) {
        asyncLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void answered(PurchaseMode path, long nanos) {
        (path == PurchaseMode.SYNC ? syncAnswer : asyncAnswer).record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void engage(boolean engaged) {
        // The mode flag's refresh calls this twice a second: only a change of setting ends a trial.
        if (engaged != this.engaged) {
            trialing = false;
        }
        if (engaged && !this.engaged) {
            long now = ticker.monotonicTime();
            double sync = best(syncEvidence, now);
            double async = best(asyncEvidence, now);
            double ratio = latencyRatio(sync, async);
            recommended = ratio >= limits.switchRatio() ? PurchaseMode.ASYNC : PurchaseMode.SYNC;
            restart = true;
            log.info(
                    "AUTO engaged in {}: best recent p95 sync={}ms async={}ms, ratio {}",
                    recommended,
                    String.format(Locale.ROOT, "%.1f", sync),
                    String.format(Locale.ROOT, "%.1f", async),
                    String.format(Locale.ROOT, "%.2f", ratio));
        }
        this.engaged = engaged;
    }

    @Scheduled(fixedRateString = "${app.mode.auto.sample-interval:200ms}")
    void sample() {
        syncIdle.probeIfIdle();
        asyncIdle.probeIfIdle();
        Signals signals = signals();
        if (!engaged) {
            pressure = 0;
            return;
        }
        long now = ticker.monotonicTime();
        if (signals.rate() >= crowdPeak || now - crowdPeakAt > SETTLE.toNanos()) {
            crowdPeak = signals.rate();
            crowdPeakAt = now;
        }
        if (restart) {
            restart = false;
            hysteresis = new Hysteresis(limits, recommended);
            // Engaging in ASYNC is a move to ASYNC like a switch, and is judged the same way.
            syncAnswerAtSwitch = known(syncAnswerEvidence, now);
            rateAtSwitch = signals.rate();
            switchedAtNanos = now;
        }
        if (hysteresis.mode() == PurchaseMode.ASYNC && now - switchedAtNanos < 3 * RATE_TIME_CONSTANT.toNanos()) {
            rateAtSwitch = Math.max(rateAtSwitch, signals.rate());
        }
        if (hysteresis.mode() == PurchaseMode.ASYNC && Double.isNaN(syncAnswerAtSwitch)) {
            // Moved to ASYNC with no recent SYNC answer (engaged after a forced ASYNC): SYNC's probes under
            // the crowd are the reference.
            syncAnswerAtSwitch = known(syncAnswerEvidence, now);
        }
        if (hysteresis.mode() == PurchaseMode.ASYNC
                && now - switchedAtNanos >= SETTLE.toNanos()
                && crowdPeak <= COMPARABLE_CROWD * Math.max(rateAtSwitch, limits.minAsyncRate())
                && noFaster(signals.asyncAnswerP95Millis(), syncAnswerAtSwitch)) {
            lesson = new Lesson(signals.asyncAnswerP95Millis(), now);
            pressure = 0;
            double syncAnswerThen = syncAnswerAtSwitch;
            syncAnswerAtSwitch = Double.NaN;
            record(
                    hysteresis.revert(clock.instant()),
                    String.format(
                            Locale.ROOT,
                            "ASYNC no faster under the crowd: answer p95 async=%.1fms against sync=%.1fms at the"
                                    + " switch, rate=%.0f/s",
                            signals.asyncAnswerP95Millis(),
                            syncAnswerThen,
                            signals.rate()),
                    now);
            return;
        }
        double current = hysteresis.mode() == PurchaseMode.SYNC ? syncPressure(signals) : asyncPressure(signals);
        pressure = current;
        if (trialing) {
            trial(signals, now);
            return;
        }
        PurchaseMode switched = hysteresis.sample(current, clock.instant());
        if (switched == PurchaseMode.ASYNC && trialEvery > 0 && hardPressure(signals) < limits.high()) {
            hysteresis.revert(clock.instant()); // not yet: a share of the crowd tries it first
            trialCause = pressureReason(current, signals);
            trialStartedAt = now;
            trialing = true;
            log.info("AUTO tries ASYNC with 1 in {} purchases: {}", trialEvery, trialCause);
        } else if (switched != null) {
            moved(switched, pressureReason(current, signals), signals, now);
        }
    }

    /**
     * A trial's sample: a bulkhead, pool or breaker at its limit moves the crowd to ASYNC at once; after
     * {@link #SETTLE}, SYNC's answers {@code switch-ratio} times ASYNC's in the same window move it, and
     * otherwise AUTO stays in SYNC with ASYNC's answers as the lesson.
     */
    private void trial(Signals signals, long now) {
        boolean limited = hardPressure(signals) >= limits.high();
        if (!limited && now - trialStartedAt < SETTLE.toNanos()) {
            return;
        }
        trialing = false;
        double async = signals.asyncAnswerP95Millis();
        double sync = signals.syncAnswerP95Millis();
        String answers = String.format(
                Locale.ROOT,
                "answer p95 async=%.1fms against sync=%.1fms under the same crowd, rate=%.0f/s",
                async,
                sync,
                signals.rate());
        // A quarter of the crowd on ASYNC is a lighter load than all of it: the move asks for the same margin
        // as the back halves did, SYNC's answers switch-ratio times ASYNC's.
        if (limited || (!Double.isNaN(async) && (Double.isNaN(sync) || sync >= limits.switchRatio() * async))) {
            meters.counter("flashsale.mode.auto.trials", "outcome", "switched").increment();
            hysteresis.move(PurchaseMode.ASYNC, clock.instant());
            String reason = limited
                    ? pressureReason(pressure, signals) + " during a trial of ASYNC"
                    : "ASYNC faster in a trial: " + answers + "; started on " + trialCause;
            moved(PurchaseMode.ASYNC, reason, signals, now);
            return;
        }
        meters.counter("flashsale.mode.auto.trials", "outcome", "stayed").increment();
        if (!Double.isNaN(async)) {
            lesson = new Lesson(async, now);
        }
        hysteresis.revert(clock.instant());
        log.info(
                "AUTO stays in SYNC: ASYNC not {}x faster in a trial: {}",
                String.format(Locale.ROOT, "%.1f", limits.switchRatio()),
                answers);
    }

    private void moved(PurchaseMode switched, String reason, Signals signals, long now) {
        rateAtSwitch = signals.rate();
        syncAnswerAtSwitch = known(syncAnswerEvidence, now);
        record(switched, reason, now);
    }

    private static String pressureReason(double pressure, Signals signals) {
        return String.format(
                Locale.ROOT,
                "pressure %.2f: inFlight=%.0f poolWaiters=%d poolActive=%d p95 sync=%.1fms async=%.1fms"
                        + " failureRate=%.1f%% rate=%.0f/s",
                pressure,
                signals.inFlight(),
                signals.poolWaiters(),
                signals.poolActive(),
                signals.syncP95Millis(),
                signals.asyncP95Millis(),
                signals.failureRate(),
                signals.rate());
    }

    private void record(PurchaseMode switched, String reason, long now) {
        switchedAtNanos = now;
        lastSwitch = new Switch(clock.instant(), switched, reason);
        recommended = switched;
        meters.counter("flashsale.mode.auto.switches", "to", switched.name()).increment();
        log.info("AUTO switched to {}: {}", switched, reason);
    }

    /**
     * Whether ASYNC's whole answers under the crowd were no faster than SYNC's at the switch. Not when
     * either is unknown, nor while ASYNC answers within the latency floor: fast is fast enough.
     */
    private boolean noFaster(double asyncAnswerP95, double syncAnswerP95) {
        double floor = limits.latencyFloor().toNanos() / 1e6;
        return !Double.isNaN(asyncAnswerP95)
                && !Double.isNaN(syncAnswerP95)
                && asyncAnswerP95 > floor
                && asyncAnswerP95 >= syncAnswerP95;
    }

    double syncPressure(Signals signals) {
        return Math.max(hardPressure(signals), latencyPressure(signals));
    }

    /** SYNC's limits, apart from speed: requests in flight against the bulkhead, pool waiters, the breaker's failure rate. */
    private double hardPressure(Signals signals) {
        int maxConcurrent = bulkhead.getBulkheadConfig().getMaxConcurrentCalls();
        double failure = signals.failureRate() < 0 ? 0 : signals.failureRate() / limits.errorRateLimit();
        return Math.max(
                Math.max(
                        signals.inFlight() / maxConcurrent, (double) signals.poolWaiters() / limits.poolWaitersLimit()),
                failure);
    }

    /**
     * The back halves' ratio against the switch ratio; while a lesson stands, no more than SYNC's whole
     * answers against ASYNC's under the crowd then.
     */
    private double latencyPressure(Signals signals) {
        double pressure = latencyRatio(signals) / limits.switchRatio();
        Lesson learned = lesson;
        if (Double.isNaN(learned.asyncAnswerP95())
                || ticker.monotonicTime() - learned.at() > limits.lessonTtl().toNanos()) {
            return pressure;
        }
        double sync = signals.syncAnswerP95Millis();
        double answers = Double.isNaN(sync) ? 0 : sync / learned.asyncAnswerP95() / limits.switchRatio();
        return Math.min(pressure, answers);
    }

    double asyncPressure(Signals signals) {
        double crowd = signals.rate() / Math.max(rateAtSwitch, limits.minAsyncRate());
        // SYNC's probes are slow: whatever the crowd, it is no place to go back to yet. No probes (no
        // traffic at all) is no evidence against it.
        boolean syncSlow = !Double.isNaN(signals.syncP95Millis()) && latencyRatio(signals) > limits.returnRatio();
        return syncSlow ? Math.max(crowd, limits.high()) : crowd;
    }

    /** SYNC's p95 over ASYNC's, each at least the floor; 0 (no evidence) when ASYNC took nothing. */
    double latencyRatio(Signals signals) {
        return latencyRatio(signals.syncP95Millis(), signals.asyncP95Millis());
    }

    private double latencyRatio(double syncP95Millis, double asyncP95Millis) {
        if (Double.isNaN(asyncP95Millis)) {
            return 0;
        }
        double floor = limits.latencyFloor().toNanos() / 1e6;
        double sync = Double.isNaN(syncP95Millis) ? floor : syncP95Millis;
        return Math.max(sync, floor) / Math.max(asyncP95Millis, floor);
    }

    private Signals signals() {
        long now = ticker.monotonicTime();
        double perSecond = rate.sample(arrivals.sum(), now);
        int maxConcurrent = bulkhead.getBulkheadConfig().getMaxConcurrentCalls();
        double inFlight = maxConcurrent - bulkhead.getMetrics().getAvailableConcurrentCalls();
        HikariPoolMXBean connections = pool == null ? null : pool.getHikariPoolMXBean();
        syncEvidence = measured(p95(syncLatency), syncEvidence, now);
        asyncEvidence = measured(p95(asyncLatency), asyncEvidence, now);
        double syncAnswerP95 = p95(syncAnswer);
        syncAnswerEvidence = measured(syncAnswerP95, syncAnswerEvidence, now);
        return new Signals(
                inFlight,
                connections == null ? 0 : connections.getThreadsAwaitingConnection(),
                connections == null ? 0 : connections.getActiveConnections(),
                known(syncEvidence, now),
                known(asyncEvidence, now),
                database.getMetrics().getFailureRate(),
                perSecond,
                syncAnswerP95,
                p95(asyncAnswer));
    }

    /** A window's p95 (NaN: it counted nothing) as the last; the best so far unless this one is lower or the best is older than the TTL. */
    private Evidence measured(double p95, Evidence previous, long now) {
        if (Double.isNaN(p95)) {
            return previous;
        }
        boolean replace = Double.isNaN(best(previous, now)) || p95 <= previous.best();
        return replace ? new Evidence(p95, now, p95, now) : new Evidence(p95, now, previous.best(), previous.bestAt());
    }

    /** The path's p95 now while it takes purchases, else (a lull, a forced other mode) its last one within the TTL. */
    private double known(Evidence evidence, long now) {
        return now - evidence.lastAt() <= limits.evidenceTtl().toNanos() ? evidence.last() : Double.NaN;
    }

    /** The lowest p95 the path showed within the evidence TTL, or NaN. */
    private double best(Evidence evidence, long now) {
        return now - evidence.bestAt() <= limits.evidenceTtl().toNanos() ? evidence.best() : Double.NaN;
    }

    /**
     * The window's p95 in ms; NaN when the path took nothing in the window. The snapshot's count is the
     * timer's total since start, so an emptied window shows as a p95 of 0 (no purchase takes 0 ns).
     */
    private static double p95(Timer window) {
        for (ValueAtPercentile percentile : window.takeSnapshot().percentileValues()) {
            double p95 = percentile.value(TimeUnit.MILLISECONDS);
            return p95 > 0 ? p95 : Double.NaN;
        }
        return Double.NaN;
    }

    /**
     * A path's idle probe: when no purchase took the path for a {@code probe-interval} (its timer counted
     * nothing new), the sampler has its back half rehearsed once ({@link PathRehearsal}, off the sampler's
     * thread, one at a time) and records the time in the path's timer like a purchase's. So both paths stay
     * measured without a shopper paying for it, in a lull (both unloaded, compared like for like) and under
     * a forced mode, and AUTO never engages blind. A rehearsal that fails (the path's dependency down) is not
     * recorded, like a purchase not carried through, and is tried again a probe-interval later. Only the
     * sampler calls {@link #probeIfIdle}.
     */
    private final class IdleProbe {

        /** One rehearsal of the path; true when it went through. */
        private interface Rehearsal {
            boolean run() throws InterruptedException;
        }

        private final PurchaseMode path;
        private final Timer window;
        private final Rehearsal rehearsal;
        private final AtomicBoolean running = new AtomicBoolean();
        private long seenCount;
        private long activeNanos = ticker.monotonicTime();

        IdleProbe(PurchaseMode path, Timer window, Rehearsal rehearsal) {
            this.path = path;
            this.window = window;
            this.rehearsal = rehearsal;
        }

        void probeIfIdle() {
            long now = ticker.monotonicTime();
            long count = window.count();
            if (count != seenCount) {
                seenCount = count;
                activeNanos = now;
            }
            long interval = limits.probeInterval().toNanos();
            if (interval <= 0 || now - activeNanos < interval || !running.compareAndSet(false, true)) {
                return;
            }
            activeNanos = now; // an attempt, even a failed one, waits a probe-interval for the next
            Thread.ofVirtual().name("auto-idle-probe-" + path).start(this::probe);
        }

        private void probe() {
            try {
                long started = ticker.monotonicTime();
                if (rehearsal.run()) {
                    window.record(ticker.monotonicTime() - started, TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                log.debug("idle probe of {} failed: {}", path, e.toString());
            } finally {
                running.set(false);
            }
        }
    }

    private static @Nullable HikariDataSource unwrap(DataSource dataSource) {
        try {
            return dataSource.isWrapperFor(HikariDataSource.class) ? dataSource.unwrap(HikariDataSource.class) : null;
        } catch (java.sql.SQLException e) {
            return null;
        }
    }
}
