package dev.flashsale.api.warmup;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * {@code flashsale.warmup.failed}: 1 once this instance's warm-up failed ({@link WarmupReport#failed()}), 0 once
 * it passed, NaN while it runs. A failed warm-up never fails the start-up (readiness is the instance's own
 * state), so this is how a release that breaks the purchase path shows before any shopper meets it: the
 * canary's gate and the FlashsaleWarmupFailed alert read it (k8s/README.md, "Deploy a release").
 */
@Component
@ConditionalOnBooleanProperty("app.warmup.enabled")
class WarmupOutcome {

    static final String METER = "flashsale.warmup.failed";

    WarmupOutcome(Warmup warmup, MeterRegistry meters) {
        register(warmup::report, meters);
    }

    static void register(Supplier<@Nullable WarmupReport> report, MeterRegistry meters) {
        Gauge.builder(METER, report, WarmupOutcome::failed)
                .description("1 when this instance's warm-up stopped early or met a server error, 0 when it passed")
                .strongReference(true)
                .register(meters);
    }

    private static double failed(Supplier<@Nullable WarmupReport> report) {
        WarmupReport done = report.get();
        if (done == null) {
            return Double.NaN;
        }
        return done.failed() ? 1 : 0;
    }
}
