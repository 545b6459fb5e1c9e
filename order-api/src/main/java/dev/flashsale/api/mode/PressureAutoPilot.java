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
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * AUTO's controller, one per API instance. Several times a second it samples the pressure on the sync
 * path — sync requests in flight against the bulkhead, threads waiting for a pooled connection, the
 * sliding-window p99 of sync purchases, the database breaker's failure rate — and feeds it to the
 * {@link Hysteresis}. While in ASYNC the sync signals go quiet (no sync traffic), so pressure there is the
 * purchase arrival rate against the rate at which the switch happened: AUTO returns to SYNC only when
 * the crowd has clearly thinned.
 */
@Component
class PressureAutoPilot implements AutoPilot {

    private static final Logger log = LoggerFactory.getLogger(PressureAutoPilot.class);
    static final String SYNC_LATENCY = "flashsale.purchase.sync.latency";

    record Signals(
            double inFlight, int poolWaiters, int poolActive, double p99Millis, double failureRate, double rate) {}

    private final AutoModeProperties limits;
    private Hysteresis hysteresis;
    private volatile boolean engaged;
    private final Bulkhead bulkhead;
    private final CircuitBreaker database;
    private final @Nullable HikariDataSource pool;
    private final Timer syncLatency;
    private final MeterRegistry meters;
    private final Clock clock;
    private final LongAdder arrivals = new LongAdder();
    private volatile PurchaseMode recommended = PurchaseMode.SYNC;
    private volatile @Nullable Switch lastSwitch;
    private volatile double pressure;
    private double rateAtSwitch;
    private double rate;
    private long lastArrivals;
    private long lastSampleNanos = System.nanoTime();

    PressureAutoPilot(
            AutoModeProperties limits,
            BulkheadRegistry bulkheads,
            CircuitBreakerRegistry breakers,
            DataSource dataSource,
            MeterRegistry meters,
            Clock clock) {
        this.limits = limits;
        this.hysteresis = new Hysteresis(limits);
        this.bulkhead = bulkheads.bulkhead("sync-db");
        this.database = breakers.circuitBreaker("postgres");
        this.pool = unwrap(dataSource);
        this.meters = meters;
        this.clock = clock;
        this.syncLatency = Timer.builder(SYNC_LATENCY)
                .description("Time a SYNC purchase spends in the database path")
                .publishPercentiles(0.99)
                .distributionStatisticExpiry(Duration.ofSeconds(2))
                .distributionStatisticBufferLength(2)
                .register(meters);
        meters.gauge("flashsale.mode.auto.pressure", this, pilot -> pilot.pressure);
        meters.gauge("flashsale.mode.auto.recommended", this, pilot -> pilot.recommended == PurchaseMode.ASYNC ? 1 : 0);
    }

    @Override
    public PurchaseMode recommended() {
        return recommended;
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
    public void engage(boolean engaged) {
        this.engaged = engaged;
    }

    @Scheduled(fixedRateString = "${app.mode.auto.sample-interval:200ms}")
    void sample() {
        Signals signals = signals();
        if (!engaged) {
            if (hysteresis.mode() != PurchaseMode.SYNC || recommended != PurchaseMode.SYNC) {
                hysteresis = new Hysteresis(limits);
                recommended = PurchaseMode.SYNC;
            }
            pressure = 0;
            return;
        }
        double current = hysteresis.mode() == PurchaseMode.SYNC ? syncPressure(signals) : asyncPressure(signals);
        pressure = current;
        PurchaseMode switched = hysteresis.sample(current, clock.instant());
        if (switched != null) {
            rateAtSwitch = signals.rate();
            String reason = String.format(
                    Locale.ROOT,
                    "pressure %.2f: inFlight=%.0f poolWaiters=%d poolActive=%d p99=%.1fms failureRate=%.1f%% rate=%.0f/s",
                    current,
                    signals.inFlight(),
                    signals.poolWaiters(),
                    signals.poolActive(),
                    signals.p99Millis(),
                    signals.failureRate(),
                    signals.rate());
            lastSwitch = new Switch(clock.instant(), switched, reason);
            recommended = switched;
            meters.counter("flashsale.mode.auto.switches", "to", switched.name())
                    .increment();
            log.info("AUTO switched to {}: {}", switched, reason);
        }
    }

    double syncPressure(Signals signals) {
        int maxConcurrent = bulkhead.getBulkheadConfig().getMaxConcurrentCalls();
        double failure = signals.failureRate() < 0 ? 0 : signals.failureRate() / limits.errorRateLimit();
        return Math.max(
                Math.max(
                        signals.inFlight() / maxConcurrent, (double) signals.poolWaiters() / limits.poolWaitersLimit()),
                Math.max(signals.p99Millis() / limits.latencyLimit().toMillis(), failure));
    }

    double asyncPressure(Signals signals) {
        return signals.rate() / Math.max(rateAtSwitch, limits.minAsyncRate());
    }

    private Signals signals() {
        long now = System.nanoTime();
        long total = arrivals.sum();
        double seconds = Math.max(1e-3, (now - lastSampleNanos) / 1e9);
        double instantRate = (total - lastArrivals) / seconds;
        rate = rate == 0 ? instantRate : 0.5 * rate + 0.5 * instantRate;
        lastArrivals = total;
        lastSampleNanos = now;
        double p99 = 0;
        for (ValueAtPercentile percentile : syncLatency.takeSnapshot().percentileValues()) {
            p99 = percentile.value(TimeUnit.MILLISECONDS);
        }
        int maxConcurrent = bulkhead.getBulkheadConfig().getMaxConcurrentCalls();
        double inFlight = maxConcurrent - bulkhead.getMetrics().getAvailableConcurrentCalls();
        HikariPoolMXBean connections = pool == null ? null : pool.getHikariPoolMXBean();
        return new Signals(
                inFlight,
                connections == null ? 0 : connections.getThreadsAwaitingConnection(),
                connections == null ? 0 : connections.getActiveConnections(),
                p99,
                database.getMetrics().getFailureRate(),
                rate);
    }

    private static @Nullable HikariDataSource unwrap(DataSource dataSource) {
        try {
            return dataSource.isWrapperFor(HikariDataSource.class) ? dataSource.unwrap(HikariDataSource.class) : null;
        } catch (java.sql.SQLException e) {
            return null;
        }
    }
}
