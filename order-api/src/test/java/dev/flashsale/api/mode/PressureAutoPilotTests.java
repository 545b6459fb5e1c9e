package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.PurchaseMode;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

class PressureAutoPilotTests {

    private static final AutoModeProperties LIMITS = AutoModeLimits.DEFAULTS;

    private final PressureAutoPilot pilot = new PressureAutoPilot(
            LIMITS,
            BulkheadRegistry.ofDefaults(),
            CircuitBreakerRegistry.ofDefaults(),
            new SimpleDriverDataSource(),
            new SimpleMeterRegistry(),
            Clock.systemUTC());

    private static PressureAutoPilot.Signals latencies(double syncP95, double asyncP95) {
        return new PressureAutoPilot.Signals(0, 0, 0, syncP95, asyncP95, 0, 100);
    }

    @Test
    void sync_counts_as_saturated_when_it_is_switch_ratio_times_slower_than_async() {
        assertThat(pilot.syncPressure(latencies(60, 20))).isEqualTo(2.0);
        assertThat(pilot.syncPressure(latencies(29, 20))).isLessThan(LIMITS.high());
        assertThat(pilot.syncPressure(latencies(31, 20))).isGreaterThanOrEqualTo(LIMITS.high());
    }

    @Test
    void below_the_floor_both_paths_are_equally_fast_and_sync_stays() {
        assertThat(pilot.latencyRatio(latencies(9, 2))).isEqualTo(1.0);
        assertThat(pilot.syncPressure(latencies(9, 2))).isLessThan(LIMITS.high());
    }

    @Test
    void without_async_measurements_latency_is_no_evidence() {
        assertThat(pilot.syncPressure(latencies(500, Double.NaN))).isZero();
    }

    @Test
    void async_returns_to_sync_only_when_the_crowd_thinned_and_sync_probes_are_healthy() {
        // No switch yet: the crowd is compared with the floor rate (50/s).
        PressureAutoPilot.Signals thin = new PressureAutoPilot.Signals(0, 0, 0, 11, 10, 0, 10);
        assertThat(pilot.asyncPressure(thin)).isLessThan(LIMITS.low());
        PressureAutoPilot.Signals slowProbes = new PressureAutoPilot.Signals(0, 0, 0, 40, 10, 0, 10);
        assertThat(pilot.asyncPressure(slowProbes)).isGreaterThanOrEqualTo(LIMITS.high());
        PressureAutoPilot.Signals idle = new PressureAutoPilot.Signals(0, 0, 0, Double.NaN, Double.NaN, 0, 0);
        assertThat(pilot.asyncPressure(idle)).as("no traffic: back to SYNC").isLessThan(LIMITS.low());
        PressureAutoPilot.Signals crowd = new PressureAutoPilot.Signals(0, 0, 0, 11, 10, 0, 400);
        assertThat(pilot.asyncPressure(crowd)).isGreaterThanOrEqualTo(LIMITS.high());
    }

    @Test
    void one_purchase_per_probe_interval_measures_the_path_not_recommended() throws Exception {
        assertThat(IntStream.range(0, 200).mapToObj(i -> pilot.route())).containsOnly(PurchaseMode.SYNC);
        Thread.sleep(LIMITS.probeInterval().toMillis() + 50);
        long probes = IntStream.range(0, 200)
                .mapToObj(i -> pilot.route())
                .filter(mode -> mode == PurchaseMode.ASYNC)
                .count();
        assertThat(probes).isEqualTo(1);
        assertThat(pilot.recommended()).isEqualTo(PurchaseMode.SYNC);
    }

    @Test
    void switches_to_async_when_measured_sync_latency_exceeds_async_by_the_ratio() {
        pilot.engage(true);
        for (int sample = 0; sample < LIMITS.samplesToAsync(); sample++) {
            for (int i = 0; i < 50; i++) {
                pilot.syncTook(Duration.ofMillis(80).toNanos());
                pilot.asyncTook(Duration.ofMillis(15).toNanos());
            }
            pilot.sample();
        }
        assertThat(pilot.recommended()).isEqualTo(PurchaseMode.ASYNC);
        assertThat(pilot.lastSwitch())
                .hasValueSatisfying(change -> assertThat(change.reason()).contains("p95 sync="));
    }

    @Test
    void stays_in_sync_while_both_paths_are_equally_fast() {
        pilot.engage(true);
        for (int sample = 0; sample < 10; sample++) {
            for (int i = 0; i < 50; i++) {
                pilot.syncTook(Duration.ofMillis(12).toNanos());
                pilot.asyncTook(Duration.ofMillis(10).toNanos());
            }
            pilot.sample();
        }
        assertThat(pilot.recommended()).isEqualTo(PurchaseMode.SYNC);
    }
}
