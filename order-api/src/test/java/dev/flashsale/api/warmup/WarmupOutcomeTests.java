package dev.flashsale.api.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WarmupOutcomeTests {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final AtomicReference<WarmupReport> report = new AtomicReference<>();

    private static WarmupReport report(Map<Integer, Integer> answers, String failure) {
        return report(answers, Map.of(404, 16, 503, 2968), failure);
    }

    private static WarmupReport report(
            Map<Integer, Integer> answers, Map<Integer, Integer> lineAnswers, String failure) {
        return new WarmupReport(
                Long.MAX_VALUE, "warmup-x", answers, lineAnswers, 200, 200, 200, Duration.ofSeconds(12), failure);
    }

    private double failed() {
        return meters.get(WarmupOutcome.METER).gauge().value();
    }

    @Test
    void a_warm_up_that_ran_every_step_and_met_only_the_answers_it_asks_for_passes() {
        WarmupOutcome.register(report::get, meters);
        report.set(report(Map.of(400, 500, 404, 1000), ""));

        assertThat(report.get().failed()).isFalse();
        assertThat(failed()).isZero();
    }

    @Test
    void a_warm_up_that_stopped_early_fails() {
        WarmupOutcome.register(report::get, meters);
        report.set(report(Map.of(404, 10), "java.lang.IllegalStateException: a warm-up round failed"));

        assertThat(report.get().failed()).isTrue();
        assertThat(failed()).isEqualTo(1);
    }

    @Test
    void a_warm_up_whose_own_purchases_met_a_server_error_fails() {
        WarmupOutcome.register(report::get, meters);
        report.set(report(Map.of(404, 1000, 500, 500), ""));

        assertThat(report.get().failed()).isTrue();
        assertThat(failed()).isEqualTo(1);
    }

    @Test
    void a_warm_up_whose_crowd_in_a_line_met_anything_but_the_line_and_a_missing_sale_fails() {
        WarmupOutcome.register(report::get, meters);
        report.set(report(Map.of(400, 500, 404, 1000), Map.of(404, 16, 503, 2000, 500, 16), ""));

        assertThat(report.get().failed()).isTrue();
        assertThat(failed()).isEqualTo(1);
    }

    @Test
    void a_warm_up_whose_own_requests_got_no_answer_fails() {
        WarmupOutcome.register(report::get, meters);
        report.set(report(Map.of(0, 1500), ""));

        assertThat(failed()).isEqualTo(1);
    }

    @Test
    void a_warm_up_still_running_is_neither_passed_nor_failed() {
        WarmupOutcome.register(report::get, meters);

        assertThat(failed()).isNaN();
    }
}
