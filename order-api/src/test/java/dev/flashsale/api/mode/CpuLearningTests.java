package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.flashsale.common.order.PurchasePath;
import org.junit.jupiter.api.Test;

/** CPU per order as a line against the rate, the steal taken out, and kept by a path not carrying a crowd. */
class CpuLearningTests {

    private double load;
    private double steal;
    private final CpuLearning learning =
            new CpuLearning(AutoModeDefaults.PROPERTIES, new BoxCpu(() -> load, () -> steal, 2));

    /** One 200 ms sample of a path carrying {@code rate} orders a second on {@code busyCores} of CPU. */
    private void carry(PurchasePath path, double rate, double busyCores) {
        load = busyCores / (2 * (1 - steal)); // the JVM's load: busy over the time the cores ran
        long orders = Math.round(rate * 0.2);
        learning.learn(
                0.2,
                orders,
                0,
                path == PurchasePath.SYNC ? orders : 0,
                path == PurchasePath.ASYNC ? orders : 0,
                orders);
    }

    private void idle(double busyCores) {
        answerWithoutPath(0, busyCores);
    }

    /** One 200 ms sample of {@code rate} requests a second answered without a path, on {@code busyCores}. */
    private void answerWithoutPath(double rate, double busyCores) {
        load = busyCores / (2 * (1 - steal));
        learning.learn(0.2, 0, 0, 0, 0, Math.round(rate * 0.2));
    }

    @Test
    void steal_is_taken_out_of_cpu_per_order() {
        steal = 0.25;
        for (int i = 0; i < 60; i++) {
            carry(PurchasePath.SYNC, 400, 0.6); // 1.5 ms per order, the JVM reading 0.4 (0.3 without steal)
        }

        assertThat(learning.cost(PurchasePath.SYNC).millisPerOrder()).isCloseTo(1.5, within(0.01));
        assertThat(learning.steal()).isCloseTo(0.25, within(0.01));
    }

    /**
     * The idle box (0.1 cores), then a SYNC ramp from 100 to 500 orders a second: under a crowd 0.2 cores more
     * than idle whatever the rate, then 1 ms per order.
     */
    private void idleThenRamp() {
        for (int i = 0; i < 60; i++) {
            idle(0.1);
        }
        for (int rate = 100; rate <= 500; rate += 8) {
            carry(PurchasePath.SYNC, rate, 0.3 + rate / 1000.0);
        }
    }

    @Test
    void a_ramp_learns_the_fixed_part_so_cpu_per_order_falls_with_the_rate() {
        // An average would say 3 ms per order at 100/s, 1.4 at 500/s.
        idleThenRamp();

        CpuCost cost = learning.cost(PurchasePath.SYNC);
        assertThat(cost.millisPerOrder()).isBetween(1.0, 1.25);
        assertThat(cost.fixedCores()).isGreaterThan(0.15);
        assertThat(cost.coresAt(500)).isCloseTo(0.8, within(0.03));
    }

    @Test
    void a_crowd_answered_without_a_path_is_no_idle_box() {
        idleThenRamp();
        CpuCost learnt = learning.cost(PurchasePath.SYNC);
        // A sold-out sale's crowd, 10 s of it: 1,500 refusals from memory and line answers a second, no purchase,
        // 1.5 cores busy. Learnt as the idle box, it would put the fixed part near 1.5 cores: a budget at the CPU
        // target of 1.6 cores would then leave SYNC nearly nothing to carry.
        for (int i = 0; i < 50; i++) {
            answerWithoutPath(1_500, 1.5);
        }

        assertThat(learning.cost(PurchasePath.SYNC)).isEqualTo(learnt);
        assertThat(learnt.fixedCores()).isLessThan(0.3);
    }

    @Test
    void orders_bought_amid_a_crowd_answered_without_a_path_teach_nothing_of_an_orders_cpu() {
        idleThenRamp();
        CpuCost learnt = learning.cost(PurchasePath.SYNC);
        // The edge of a flash sale's crowd: 100 orders a second amid 3,000 line answers and refusals, 1.6 cores
        // busy and still under the CPU target. Learnt from, it would read as 15 ms an order.
        load = 1.6 / 2;
        for (int i = 0; i < 5; i++) {
            learning.learn(0.2, 20, 0, 20, 0, 620);
        }

        assertThat(learning.cost(PurchasePath.SYNC)).isEqualTo(learnt);
    }

    @Test
    void a_jvm_starting_on_an_idle_box_is_not_the_idle_box() {
        // A fresh JVM's first 2 s: 1.44 cores busy loading classes and compiling, nothing arriving; then a crowd,
        // before the box was ever idle.
        for (int i = 0; i < 10; i++) {
            idle(1.44);
        }
        for (int rate = 100; rate <= 500; rate += 8) {
            carry(PurchasePath.SYNC, rate, 0.3 + rate / 1000.0);
        }

        // Near the line a ramp from the idle box of 0.1 core learns (a_ramp_learns_the_fixed_part_...).
        CpuCost cost = learning.cost(PurchasePath.SYNC);
        assertThat(cost.millisPerOrder()).isBetween(1.0, 1.25);
        assertThat(cost.coresAt(500)).isCloseTo(0.8, within(0.03));
    }

    @Test
    void a_path_not_carrying_the_crowd_keeps_its_line() {
        for (int i = 0; i < 60; i++) {
            carry(PurchasePath.SYNC, 400, 0.6);
        }
        CpuCost learnt = learning.cost(PurchasePath.SYNC);
        steal = 0.3;
        for (int i = 0; i < 200; i++) {
            carry(PurchasePath.ASYNC, 300, 1.0);
        }

        assertThat(learning.cost(PurchasePath.SYNC)).isEqualTo(learnt);
        assertThat(learning.cost(PurchasePath.ASYNC).millisPerOrder()).isCloseTo(1000 / 300.0, within(0.01));
    }

    @Test
    void a_path_never_carried_costs_the_others_line_plus_the_priors_difference() {
        for (int i = 0; i < 60; i++) {
            carry(PurchasePath.SYNC, 400, 0.6);
        }

        assertThat(learning.cost(PurchasePath.ASYNC).millisPerOrder()).isCloseTo(1.5 + 1.24 - 0.93, within(0.01));
    }
}
