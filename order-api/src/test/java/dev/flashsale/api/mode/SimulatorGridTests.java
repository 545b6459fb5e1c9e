package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * AUTO against the better fixed mode on every cell of the {@link SimulatorGrid}. The table is printed and
 * written to target/simulator-grid.md.
 */
class SimulatorGridTests {

    static final SimulatedPilot.Factory CONTROLLER = ModelPilot.FACTORY;

    /**
     * Cells AUTO is known to miss, each with its reason; the test fails on any other miss, and on one of these
     * passing (take it off the list). Postgres 5 ms, 0 to 3,200/s in a second: idle, AUTO rightly carries the
     * faster ASYNC; the spike's first second is answered there before the model, seeing the crowd, moves it to
     * the cheaper SYNC, and that second's tail is AUTO's p99 (ASYNC's own, 285 against SYNC's 145 ms). Goodput
     * is SYNC's.
     */
    static final List<SimulatorGrid.Cell> KNOWN_MISSES = List.of(new SimulatorGrid.Cell(5, Shape.SPIKE, 3200));

    /** The highest plateau (steps of 100/s) a fixed mode serves at p99 under 50 ms with under 1 % refused. */
    private static double knee(ModeSetting mode) {
        double knee = 0;
        for (double rate = 300; rate <= 1500; rate += 100) {
            SimulatorGrid.Cell cell = new SimulatorGrid.Cell(0, Shape.PLATEAU, rate);
            Simulator.Result result = SimulatorGrid.run(cell, mode, CONTROLLER);
            if (result.p99Millis() >= 50 || result.refused() > 0.01 * result.offered()) {
                break;
            }
            knee = rate;
        }
        return knee;
    }

    @Test
    void the_simulated_box_has_the_bench_boxs_knees() {
        double sync = knee(ModeSetting.SYNC);
        double async = knee(ModeSetting.ASYNC);
        double syncSaturation = SimulatorGrid.run(
                        new SimulatorGrid.Cell(0, Shape.PLATEAU, 2 * sync), ModeSetting.SYNC, CONTROLLER)
                .goodput();
        double asyncSaturation = SimulatorGrid.run(
                        new SimulatorGrid.Cell(0, Shape.PLATEAU, 2 * async), ModeSetting.ASYNC, CONTROLLER)
                .goodput();
        System.out.println("simulated knees, Postgres local: SYNC " + sync + "/s, ASYNC " + async
                + "/s; goodput at twice the knee: SYNC " + Math.round(syncSaturation) + "/s, ASYNC "
                + Math.round(asyncSaturation) + "/s");

        // The bench at aa11ba3: SYNC 878/s, ASYNC 686/s (steps of 10 s; the refine step sets the last digits).
        assertThat(sync).isBetween(700.0, 1000.0);
        assertThat(async).isBetween(500.0, 800.0);
        assertThat(sync).isGreaterThan(async);
    }

    /**
     * Issue 39: steady crowds both paths carry, on a box with noise on CPU per order and 5–30 % steal. SYNC
     * answers them inside the objective, so AUTO keeps them there with a final answer, makes no switch at
     * all (a switch costs a tail, {@link Simulator#SWITCH_COLD_MS}), and so answers as SYNC does.
     */
    @Test
    void auto_keeps_a_steady_crowd_both_paths_carry_in_sync_without_a_switch() {
        List<SimulatorGrid.Verdict> verdicts = SimulatorGrid.steadyCells().stream()
                .map(cell -> SimulatorGrid.judge(cell, CONTROLLER))
                .toList();
        String table = SimulatorGrid.HEADER + "\n"
                + verdicts.stream().map(SimulatorGrid.Verdict::row).collect(Collectors.joining("\n"))
                + "\n(the verdict column is the grid's, against the lower p99; here AUTO is held to SYNC's)";
        System.out.println(table);

        assertThat(verdicts.stream()
                        .filter(v -> v.auto().switches() > 0
                                || v.auto().viaAsync() > 0
                                || v.auto().p99Millis() > 1.1 * v.sync().p99Millis() + 5)
                        .map(v -> v.cell().rate() + "/s: " + v.auto().switches() + " switches, "
                                + v.auto().viaAsync() + " via ASYNC, p99 "
                                + Math.round(v.auto().p99Millis())
                                + " against SYNC's " + Math.round(v.sync().p99Millis()) + " ms"))
                .as("AUTO left SYNC on a steady crowd both paths carry:\n%s\n", table)
                .isEmpty();
    }

    @Test
    void auto_is_never_worse_than_the_better_fixed_mode_across_the_grid() throws IOException {
        List<SimulatorGrid.Verdict> verdicts = SimulatorGrid.cells().stream()
                .map(cell -> SimulatorGrid.judge(cell, CONTROLLER))
                .toList();
        String table = SimulatorGrid.HEADER + "\n"
                + verdicts.stream().map(SimulatorGrid.Verdict::row).collect(Collectors.joining("\n"));
        long failed = verdicts.stream().filter(v -> !v.passes()).count();
        String report = table + "\n\n" + failed + " of " + verdicts.size() + " cells fail\n";
        System.out.println(report);
        Path out = Path.of("target", "simulator-grid.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, report);
        assertThat(verdicts.stream().filter(v -> !v.passes()).map(SimulatorGrid.Verdict::cell))
                .as(report)
                .containsExactlyInAnyOrderElementsOf(KNOWN_MISSES);
    }
}
