package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.flashsale.common.order.PurchasePath;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The controller's hysteresis, its hard moves and its learning, on a clock moved by hand. */
class ModelAutoPilotTests {

    private final MockClock clock = new MockClock();
    private final CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    private double cpuLoad;
    private final ModelAutoPilot pilot = new ModelAutoPilot(
            AutoModeDefaults.PROPERTIES,
            AutoModeDefaults.DOOR,
            breakers,
            new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock),
            Clock.systemUTC(),
            new BoxCpu(() -> cpuLoad, () -> 0, 2));

    /** One sample interval in which both paths were measured: SYNC's back half and ASYNC's, in ms. */
    private void sample(double syncMillis, double asyncMillis) {
        clock.add(200, TimeUnit.MILLISECONDS);
        pilot.rehearsed(PurchasePath.SYNC, (long) (syncMillis * 1e6));
        pilot.rehearsed(PurchasePath.ASYNC, (long) (asyncMillis * 1e6));
        pilot.sample();
    }

    @Test
    void engages_on_the_models_choice_of_that_moment() {
        sample(27, 2);
        pilot.engage(true);
        sample(27, 2);

        assertThat(pilot.recommended()).isEqualTo(PurchasePath.ASYNC);
        assertThat(pilot.lastSwitch().orElseThrow().reason())
                .startsWith("engaged: SYNC answers too slowly, ASYNC in time");
    }

    @Test
    void a_disengaged_pilot_measures_but_decides_nothing() {
        for (int i = 0; i < 20; i++) {
            sample(27, 2);
        }

        assertThat(pilot.recommended()).isEqualTo(PurchasePath.SYNC);
        assertThat(pilot.lastSwitch()).isEmpty();
    }

    @Test
    void moves_to_async_when_sync_slows_but_not_on_one_sample_and_back_later_still() {
        pilot.engage(true);
        for (int i = 0; i < 20; i++) {
            sample(2, 2);
        }
        int toAsync = samplesUntil(PurchasePath.ASYNC, 27, 2);
        int toSync = samplesUntil(PurchasePath.SYNC, 2, 2);

        // The rehearsals' median over 5 s turns after about 13 samples, then samples-to-async (5).
        assertThat(toAsync).isBetween(5, 20);
        assertThat(toSync).isBetween(10, 25);
    }

    /** Samples with the given back halves until the pilot recommends {@code mode}; how many it took. */
    private int samplesUntil(PurchasePath mode, double syncMillis, double asyncMillis) {
        for (int i = 1; i <= 100; i++) {
            sample(syncMillis, asyncMillis);
            if (pilot.recommended() == mode) {
                return i;
            }
        }
        return Integer.MAX_VALUE;
    }

    @Test
    void a_failing_dependency_moves_the_crowd_at_once_whatever_the_streak_and_the_dwell() {
        pilot.engage(true);
        sample(27, 2);
        assertThat(pilot.recommended()).isEqualTo(PurchasePath.ASYNC);

        breakers.circuitBreaker("broker").transitionToOpenState();
        sample(27, 2);

        assertThat(pilot.recommended()).isEqualTo(PurchasePath.SYNC);
        assertThat(pilot.lastSwitch().orElseThrow().reason()).startsWith("ASYNC failing: breaker broker OPEN");
    }

    @Test
    void an_open_database_breaker_moves_the_crowd_to_async_at_once() {
        pilot.engage(true);
        sample(2, 2);
        breakers.circuitBreaker("postgres").transitionToOpenState();
        sample(2, 2);

        assertThat(pilot.recommended()).isEqualTo(PurchasePath.ASYNC);
    }

    @Test
    void learns_cpu_per_order_of_the_path_carrying_the_crowd_and_prices_the_other_by_the_priors() {
        PathMeasurements measurements = new PathMeasurements(
                AutoModeDefaults.PROPERTIES,
                new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock),
                breakers.circuitBreaker("postgres"),
                breakers.circuitBreaker("broker"),
                new BoxCpu(() -> cpuLoad, () -> 0, 2));
        for (int i = 0; i < 100; i++) {
            clock.add(200, TimeUnit.MILLISECONDS);
            cpuLoad = 0.3; // 0.6 cores for 400 orders a second: 1.5 ms per order
            for (int order = 0; order < 80; order++) {
                measurements.arrived();
                measurements.took(PurchasePath.SYNC, Duration.ofMillis(3).toNanos());
            }
            measurements.read(PurchasePath.SYNC);
        }

        assertThat(measurements.cpuCost(PurchasePath.SYNC).millisPerOrder()).isCloseTo(1.5, within(0.01));
        assertThat(measurements.cpuCost(PurchasePath.ASYNC).millisPerOrder())
                .isCloseTo(1.5 + 1.24 - 0.93, within(0.01));
    }

    @Test
    void a_sold_out_crowd_answered_by_requests_alone_is_not_learnt_as_the_idle_box() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
        PathMeasurements measurements = new PathMeasurements(
                AutoModeDefaults.PROPERTIES,
                meters,
                breakers.circuitBreaker("postgres"),
                breakers.circuitBreaker("broker"),
                new BoxCpu(() -> cpuLoad, () -> 0, 2));
        for (int i = 0; i < 100; i++) {
            cpuLoad = 0.05; // idle: 0.1 cores
            clock.add(200, TimeUnit.MILLISECONDS);
            measurements.read(PurchasePath.SYNC);
        }
        for (int i = 0; i < 100; i++) {
            clock.add(200, TimeUnit.MILLISECONDS);
            cpuLoad = 0.3; // 0.6 cores for 400 orders a second
            for (int order = 0; order < 80; order++) {
                measurements.arrived();
                measurements.took(PurchasePath.SYNC, Duration.ofMillis(3).toNanos());
            }
            measurements.read(PurchasePath.SYNC);
        }
        CpuCost learnt = measurements.cpuCost(PurchasePath.SYNC);
        // Then the sale is sold out: 1,500 requests a second refused from memory (Spring's http.server.requests
        // counts them), none reaching a path, on 1.5 busy cores.
        Timer requests = meters.timer("http.server.requests", "uri", "/api/v1/sales/{saleId}/orders");
        for (int i = 0; i < 50; i++) {
            clock.add(200, TimeUnit.MILLISECONDS);
            cpuLoad = 0.75;
            for (int request = 0; request < 300; request++) {
                requests.record(1, TimeUnit.MILLISECONDS);
            }
            measurements.read(PurchasePath.SYNC);
        }

        assertThat(measurements.cpuCost(PurchasePath.SYNC)).isEqualTo(learnt);
    }
}
