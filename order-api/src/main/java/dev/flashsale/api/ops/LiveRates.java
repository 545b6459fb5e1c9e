package dev.flashsale.api.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Purchases per second on this instance, by mode and outcome, from {@code flashsale.purchases} sampled
 * at a fixed interval: the rate does not depend on how many consoles poll, nor how often.
 */
@Component
class LiveRates {

    /** The outcomes that told a shopper "yours": 201 CONFIRMED in SYNC, 202 ACCEPTED in ASYNC. */
    static final Set<String> ACCEPTED = Set.of("CONFIRMED", "ACCEPTED");

    record Rates(Map<String, Map<String, Double>> byModeAndOutcome, Map<String, Double> acceptedByMode) {}

    private final MeterRegistry meters;
    private Map<String, Double> last = Map.of();
    private long lastNanos = System.nanoTime();
    private volatile Rates rates = new Rates(Map.of(), Map.of());

    LiveRates(MeterRegistry meters) {
        this.meters = meters;
    }

    Rates current() {
        return rates;
    }

    @Scheduled(fixedRateString = "${app.ops.sample-interval:1s}")
    void sample() {
        Map<String, Double> counts = new TreeMap<>();
        for (Counter counter : meters.find("flashsale.purchases").counters()) {
            String mode = counter.getId().getTag("mode");
            String outcome = counter.getId().getTag("outcome");
            if (mode != null && outcome != null) {
                counts.merge(mode + "/" + outcome, counter.count(), Double::sum);
            }
        }
        long now = System.nanoTime();
        double seconds = Math.max(1e-3, (now - lastNanos) / 1e9);
        Map<String, Map<String, Double>> byOutcome = new TreeMap<>();
        Map<String, Double> accepted = new TreeMap<>(Map.of("SYNC", 0.0, "ASYNC", 0.0));
        counts.forEach((key, count) -> {
            double rate = Math.max(0, count - last.getOrDefault(key, 0.0)) / seconds;
            String mode = key.substring(0, key.indexOf('/'));
            String outcome = key.substring(key.indexOf('/') + 1);
            byOutcome.computeIfAbsent(mode, m -> new TreeMap<>()).put(outcome, rate);
            if (ACCEPTED.contains(outcome)) {
                accepted.merge(mode, rate, Double::sum);
            }
        });
        last = counts;
        lastNanos = now;
        rates = new Rates(byOutcome, accepted);
    }
}
