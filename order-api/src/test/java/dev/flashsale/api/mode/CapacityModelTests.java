package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.flashsale.common.order.PurchasePath;
import org.junit.jupiter.api.Test;

/** The model's arithmetic and choices, on readings written out by hand. */
class CapacityModelTests {

    private final CapacityModel model = new CapacityModel(AutoModeDefaults.PROPERTIES, 20, 32);

    private static CapacityModel.Path healthy(double backHalfMillis, double cpuMillis) {
        return new CapacityModel.Path(backHalfMillis, new CpuCost(0, cpuMillis), false, "");
    }

    private static CapacityModel.Path failing(double backHalfMillis, double cpuMillis) {
        return new CapacityModel.Path(backHalfMillis, new CpuCost(0, cpuMillis), true, "breaker OPEN");
    }

    private static CapacityModel.Readings readings(
            double offered, double syncRoundTrip, double asyncRoundTrip, double answer) {
        return readings(offered, syncRoundTrip, asyncRoundTrip, answer, 0);
    }

    private static CapacityModel.Readings readings(
            double offered, double syncRoundTrip, double asyncRoundTrip, double answer, double steal) {
        return new CapacityModel.Readings(
                offered,
                PurchasePath.SYNC,
                answer,
                syncRoundTrip,
                2,
                steal,
                0.13,
                healthy(syncRoundTrip, 1.23),
                healthy(asyncRoundTrip, 1.54));
    }

    /** The path the model chooses for these readings while purchases take {@code current}. */
    private PurchasePath chosen(CapacityModel.Readings readings, PurchasePath current) {
        return model.choose(readings, current).path();
    }

    @Test
    void a_paths_cpu_capacity_is_the_cores_it_may_fill_over_its_cpu_per_order() {
        CapacityModel.Estimate sync = model.estimate(PurchasePath.SYNC, readings(100, 2, 2, 13));

        assertThat(sync.capacity()).isCloseTo(2 * 0.85 / 0.00123, within(1.0));
        assertThat(sync.bound()).isEqualTo("cpu");
        assertThat(sync.answerMillis()).isEqualTo(13);
    }

    @Test
    void a_path_answering_slower_than_the_doors_target_carries_the_doors_minimum_over_its_answer() {
        // Postgres 200 ms away: a commit of five round trips is a second.
        CapacityModel.Estimate sync = model.estimate(PurchasePath.SYNC, readings(100, 1000, 2, 12));

        assertThat(sync.bound()).isEqualTo("door");
        assertThat(sync.capacity()).isCloseTo(32 / 1.01, within(0.1)); // the linger, then the commit
    }

    @Test
    void the_path_not_carrying_the_crowd_answers_in_what_both_share_plus_its_own_back_half() {
        CapacityModel.Estimate async = model.estimate(PurchasePath.ASYNC, readings(100, 3, 2, 13));

        assertThat(async.answerMillis()).isEqualTo(12);
    }

    @Test
    void sync_keeps_a_crowd_it_carries_in_time_though_async_answers_6_ms_faster() {
        // Issue 39's sitting at 400/s: SYNC 681/s answering in 14.4 ms, ASYNC 728/s in 8.5 ms.
        CapacityModel.Choice choice = model.choose(readings(399, 8, 2.1, 14.4), PurchasePath.SYNC);

        assertThat(choice.path()).isEqualTo(PurchasePath.SYNC);
        assertThat(choice.reason()).startsWith("SYNC carries it with 10% headroom in time");
    }

    @Test
    void a_path_answers_in_at_least_the_linger_plus_its_round_trip() {
        // Idle: nothing answered yet, but a crowd's purchase would wait for the linger.
        CapacityModel.Estimate sync = model.estimate(PurchasePath.SYNC, readings(0, 27, 2, Double.NaN));

        assertThat(sync.answerMillis()).isEqualTo(37);
    }

    @Test
    void sync_keeps_the_crowd_with_the_headroom_and_takes_it_back_only_with_the_return_headroom() {
        // SYNC answers in 30 ms: 1.1 x 30 is within the 35 ms objective, 1.3 x 30 is not.
        CapacityModel.Readings readings = readings(300, 15, 2, 30);

        assertThat(chosen(readings, PurchasePath.SYNC)).isEqualTo(PurchasePath.SYNC);
        assertThat(chosen(readings, PurchasePath.ASYNC)).isEqualTo(PurchasePath.ASYNC);
    }

    @Test
    void async_takes_a_crowd_for_its_answer_only_when_it_answers_the_return_headroom_faster() {
        // SYNC answers in 33 ms (1.1 x 33 is past the objective); ASYNC in 26 ms: 1.3 x 26 is not under 33.
        assertThat(chosen(readings(300, 9, 2, 33), PurchasePath.SYNC)).isEqualTo(PurchasePath.SYNC);
        // ASYNC in 13 ms of SYNC's 40: worth a switch.
        assertThat(chosen(readings(300, 29, 2, 40), PurchasePath.SYNC)).isEqualTo(PurchasePath.ASYNC);
    }

    @Test
    void steal_and_a_paths_fixed_cores_come_off_the_cpu_budget() {
        CapacityModel.Readings readings = new CapacityModel.Readings(
                100,
                PurchasePath.SYNC,
                13,
                2,
                2,
                0.3,
                0.13,
                new CapacityModel.Path(2, new CpuCost(0.2, 1.23), false, ""),
                healthy(2, 1.54));

        CapacityModel.Estimate sync = model.estimate(PurchasePath.SYNC, readings);

        assertThat(sync.capacity()).isCloseTo((2 * 0.7 * 0.85 - 0.2) / 0.00123, within(1.0));
    }

    @Test
    void async_takes_a_crowd_both_carry_when_sync_answers_clearly_slower() {
        // Postgres 5 ms away: SYNC's commit 27 ms, ASYNC's confirm 2 ms.
        CapacityModel.Choice choice = model.choose(readings(200, 27, 2, 38), PurchasePath.SYNC);

        assertThat(choice.path()).isEqualTo(PurchasePath.ASYNC);
    }

    @Test
    void a_crowd_sync_carries_more_of_stays_in_sync_though_async_answers_faster_alone() {
        // 1,300/s: ASYNC's 1.54 ms per order fills 85 % of two cores at 1,104/s, SYNC's 1.23 ms at 1,382/s.
        CapacityModel.Choice choice = model.choose(readings(1300, 5, 2, 16), PurchasePath.SYNC);

        assertThat(choice.path()).isEqualTo(PurchasePath.SYNC);
        assertThat(choice.reason()).startsWith("neither carries it, SYNC as much");
    }

    @Test
    void a_crowd_neither_can_carry_goes_to_the_larger_capacity() {
        assertThat(chosen(readings(3000, 3, 2, 14), PurchasePath.ASYNC)).isEqualTo(PurchasePath.SYNC);
        assertThat(chosen(readings(3000, 1000, 2, 14), PurchasePath.SYNC)).isEqualTo(PurchasePath.ASYNC);
    }

    @Test
    void unmeasured_paths_compare_as_equal_and_sync_wins() {
        CapacityModel.Choice choice = model.choose(readings(0, Double.NaN, Double.NaN, Double.NaN), PurchasePath.SYNC);

        assertThat(choice.path()).isEqualTo(PurchasePath.SYNC);
    }

    @Test
    void a_failing_database_moves_the_crowd_to_async_at_once_whatever_the_capacities() {
        CapacityModel.Readings readings = new CapacityModel.Readings(
                100, PurchasePath.SYNC, 13, 2, 2, 0, 0.13, failing(2, 1.23), healthy(2, 1.54));

        CapacityModel.Choice choice = model.choose(readings, PurchasePath.SYNC);

        assertThat(choice.path()).isEqualTo(PurchasePath.ASYNC);
        assertThat(choice.why()).isEqualTo(CapacityModel.Why.FAILING);
        assertThat(choice.reason()).contains("SYNC failing").contains("breaker OPEN");
    }

    @Test
    void a_failing_broker_moves_the_crowd_to_sync_at_once() {
        CapacityModel.Readings readings = new CapacityModel.Readings(
                100, PurchasePath.ASYNC, 13, 2, 2, 0, 0.13, healthy(1000, 1.23), failing(2, 1.54));

        CapacityModel.Choice choice = model.choose(readings, PurchasePath.ASYNC);

        assertThat(choice.path()).isEqualTo(PurchasePath.SYNC);
        assertThat(choice.why()).isEqualTo(CapacityModel.Why.FAILING);
    }
}
