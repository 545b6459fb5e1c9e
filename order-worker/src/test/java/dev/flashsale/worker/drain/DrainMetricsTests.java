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

    /** A counter of {@code meter} for each value of the enum, tagged with its lower-case name, and at zero. */
    private void assertCountersAtZero(String meter, String tag, Enum<?>[] values) {
        for (Enum<?> value : values) {
            assertThat(registry.get(meter)
                            .tag(tag, value.name().toLowerCase(Locale.ROOT))
                            .counter()
                            .count())
                    .isZero();
        }
    }

    @Test
    void every_outcome_and_dead_letter_reason_has_its_counter_from_the_start() {
        assertCountersAtZero("flashsale.worker.orders", "outcome", Outcome.values());
        assertCountersAtZero("flashsale.worker.dead.lettered", "reason", DeadLetterReason.values());
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
