package dev.flashsale.worker.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.worker.drain.DrainMetrics.DeadLetterReason;
import dev.flashsale.worker.drain.DrainMetrics.Outcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Locale;
import org.junit.jupiter.api.Test;

class DrainMetricsTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DrainMetrics metrics = new DrainMetrics(registry);

    @Test
    void every_outcome_and_dead_letter_reason_has_its_counter_from_the_start() {
        for (Outcome outcome : Outcome.values()) {
            assertThat(registry.get("flashsale.worker.orders")
                            .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                            .counter()
                            .count())
                    .isZero();
        }
        for (DeadLetterReason reason : DeadLetterReason.values()) {
            assertThat(registry.get("flashsale.worker.dead.lettered")
                            .tag("reason", reason.name().toLowerCase(Locale.ROOT))
                            .counter()
                            .count())
                    .isZero();
        }
    }

    @Test
    void an_order_counts_under_its_own_outcome_only() {
        metrics.order(Outcome.values()[0]);
        metrics.deadLettered(DeadLetterReason.values()[0]);

        assertThat(registry.get("flashsale.worker.orders").counters())
                .extracting(counter -> counter.count())
                .containsOnlyOnce(1.0);
        assertThat(registry.get("flashsale.worker.dead.lettered").counters())
                .extracting(counter -> counter.count())
                .containsOnlyOnce(1.0);
    }
}
