package dev.flashsale.api.ops;

import dev.flashsale.api.PurchaseRoute;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * A p99 for purchase requests only (not every endpoint), over the last 20-30 s, per answer (201 SYNC,
 * 202 ASYNC): the console reads it, Prometheus scrapes it as {@code quantile="0.99"}. No histogram
 * buckets: Prometheus needs one type per metric name, and buckets on every endpoint would cost every
 * request.
 */
@Component
class PurchaseLatencyDistribution implements MeterFilter {

    static boolean isPurchase(Meter.Id id) {
        String uri = id.getTag("uri");
        return "http.server.requests".equals(id.getName()) && PurchaseRoute.TEMPLATE.equals(uri);
    }

    @Override
    public @Nullable DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
        if (!isPurchase(id)) {
            return config;
        }
        return DistributionStatisticConfig.builder()
                .percentiles(0.99)
                .minimumExpectedValue((double) Duration.ofMillis(1).toNanos())
                .maximumExpectedValue((double) Duration.ofSeconds(10).toNanos())
                .expiry(Duration.ofSeconds(30))
                .bufferLength(3)
                .build()
                .merge(config);
    }
}
