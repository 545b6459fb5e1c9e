package dev.flashsale.api.ops;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.flashsale.api.mode.ModeSwitch;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * What the console's live panel shows, in one call: this instance's purchase rates, accept p99 per mode,
 * AUTO's pressure, breakers and bulkhead from its meters and registries, and the order queues from the
 * broker. Numbers are this instance's; the Grafana dashboard sums the fleet.
 */
@RestController
class LiveController {

    private final ModeSwitch modes;
    private final LiveRates rates;
    private final BrokerQueues queues;
    private final MeterRegistry meters;
    private final CircuitBreakerRegistry breakers;
    private final Bulkhead syncBulkhead;
    private final Clock clock;

    LiveController(
            ModeSwitch modes,
            LiveRates rates,
            BrokerQueues queues,
            MeterRegistry meters,
            CircuitBreakerRegistry breakers,
            BulkheadRegistry bulkheads,
            Clock clock) {
        this.modes = modes;
        this.rates = rates;
        this.queues = queues;
        this.meters = meters;
        this.breakers = breakers;
        this.syncBulkhead = bulkheads.bulkhead("sync-db");
        this.clock = clock;
    }

    record BulkheadView(int available, int max) {}

    record LiveView(
            Instant at,
            String setting,
            String effective,
            double autoPressure,
            Map<String, Double> acceptedPerSecond,
            Map<String, Map<String, Double>> purchasesPerSecond,
            // A mode with no answer lately has no p99: the key is left out rather than null.
            @JsonInclude(content = JsonInclude.Include.NON_NULL)
            Map<String, @Nullable Double> acceptP99Millis,

            Map<String, String> breakers,
            BulkheadView syncBulkhead,
            BrokerQueues.QueueView orders,
            BrokerQueues.QueueView retries,
            BrokerQueues.QueueView deadLetters) {}

    @GetMapping(path = "/api/v1/admin/live", produces = MediaType.APPLICATION_JSON_VALUE)
    LiveView live() {
        LiveRates.Rates current = rates.current();
        Map<String, String> breakerStates = new TreeMap<>();
        breakers.getAllCircuitBreakers()
                .forEach(breaker ->
                        breakerStates.put(breaker.getName(), breaker.getState().name()));
        Map<String, @Nullable Double> p99 = new TreeMap<>();
        p99.put("SYNC", acceptP99Millis("201"));
        p99.put("ASYNC", acceptP99Millis("202"));
        Gauge pressure = meters.find("flashsale.mode.auto.pressure").gauge();
        return new LiveView(
                clock.instant(),
                modes.setting().name(),
                modes.effective().name(),
                pressure == null ? 0 : pressure.value(),
                current.acceptedByMode(),
                current.byModeAndOutcome(),
                p99,
                breakerStates,
                new BulkheadView(
                        syncBulkhead.getMetrics().getAvailableConcurrentCalls(),
                        syncBulkhead.getMetrics().getMaxAllowedConcurrentCalls()),
                queues.orders(),
                queues.retries(),
                queues.deadLetters());
    }

    /**
     * The p99 of purchases answered with this status over the last few seconds (201: SYNC, 202: ASYNC),
     * as {@link PurchaseLatencyDistribution} configures it; null when none was answered.
     */
    private @Nullable Double acceptP99Millis(String status) {
        double worst = Double.NaN;
        for (Timer timer :
                meters.find("http.server.requests").tag("status", status).timers()) {
            if (!PurchaseLatencyDistribution.isPurchase(timer.getId())) {
                continue;
            }
            for (ValueAtPercentile value : timer.takeSnapshot().percentileValues()) {
                if (value.percentile() == 0.99 && value.value() > 0) {
                    double millis = value.value(TimeUnit.MILLISECONDS);
                    worst = Double.isNaN(worst) ? millis : Math.max(worst, millis);
                }
            }
        }
        return Double.isNaN(worst) ? null : worst;
    }
}
