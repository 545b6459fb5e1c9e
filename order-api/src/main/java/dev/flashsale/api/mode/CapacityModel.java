package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.util.Locale;

/**
 * AUTO's model of the two paths, free of I/O: from one sample's {@link Readings}, what each path could
 * carry and how fast it would answer, and which path should carry the crowd.
 *
 * <ul>
 *   <li><b>Answer</b> of a path = what both paths share (the carrying path's whole answer less its round
 *       trip: the reservation, the linger, the wait for a round, the CPU's queue; never less than the
 *       linger, which a crowd's purchase waits on either path) + the path's own round trip (SYNC: the
 *       commit; ASYNC: publish, confirm, mark PUBLISHED), rehearsed alike for both paths: a path carrying a
 *       crowd is never compared with an idle one.
 *   <li><b>Capacity</b> of a path = the least of two bounds. CPU: the cores the hypervisor leaves at the
 *       CPU target, less the path's fixed cores, over its CPU per order ({@link CpuCost}, learnt as a line
 *       against the rate); when more is offered than that, the refused purchases' CPU shares the budget.
 *       The door, by Little's law: a path slower at the door than the door's target (its round trip, and of
 *       the shared queue at most the target: beyond it the queue is the CPU's, which the CPU bound counts)
 *       meets a door held at its minimum limit, so it carries at most {@code min-limit / that time}.
 *   <li><b>Choice</b>, one rule that values SYNC's final answer (decision 0021). With {@code k = 1 +
 *       headroom} and {@code j = 1 + return-headroom} while SYNC carries the crowd, {@code k = 1 +
 *       return-headroom} and {@code j = 1} while ASYNC does: SYNC <i>fits</i> when it is not failing, carries
 *       {@code k ×} the offered rate and answers within {@code objective / k}; ASYNC <i>fits</i> when it
 *       carries {@code j ×} the rate and {@code j ×} its answer is within the objective and SYNC's answer.
 *       The crowd is on ASYNC only when ASYNC is not failing, SYNC does not fit, and SYNC is failing, or
 *       ASYNC fits, or ASYNC carries {@code j ×} SYNC's capacity. A faster answer alone never moves a crowd
 *       SYNC carries in time; a move for an answer must buy the return headroom.
 * </ul>
 */
final class CapacityModel {

    /** What one sample measured of a path; NaN where nothing was measured. */
    record Path(double roundTripMillis, CpuCost cpu, boolean failing, String failure) {}

    /**
     * One sample: the offered rate (arrivals, the door's refusals included), the whole answer of the path
     * carrying the crowd and its round trip (what both paths share is their difference), the box's cores
     * and the share of them the hypervisor takes (steal).
     */
    record Readings(
            double offeredPerSecond,
            PurchasePath carrying,
            double carryingAnswerMillis,
            double carryingRoundTripMillis,
            int cores,
            double steal,
            double refusalCpuMillis,
            Path sync,
            Path async) {

        Path of(PurchasePath mode) {
            return mode == PurchasePath.SYNC ? sync : async;
        }
    }

    /** A path's estimate: orders per second it can carry, and its answer (ms). */
    record Estimate(double capacity, double answerMillis, String bound) {}

    /** The model's choice, and what decided it. */
    record Choice(PurchasePath path, Why why, String reason) {}

    /** What decided a choice: how urgent a move to it is. */
    enum Why {
        /** A dependency of the path carrying the crowd fails: move at once. */
        FAILING,
        /** The path carrying the crowd cannot carry it, or carries less: move soon. */
        CAPACITY,
        /** SYNC's answer left the objective, or came back within it: move when that has held a while. */
        ANSWER
    }

    private final AutoModeProperties limits;
    private final double doorTargetMillis;
    private final int doorMinLimit;
    private final double objectiveMillis;
    private final double lingerMillis;

    CapacityModel(AutoModeProperties limits, double doorTargetMillis, int doorMinLimit) {
        this.limits = limits;
        this.doorTargetMillis = doorTargetMillis;
        this.doorMinLimit = doorMinLimit;
        this.objectiveMillis = limits.answerObjective().toNanos() / 1e6;
        this.lingerMillis = limits.linger().toNanos() / 1e6;
    }

    Estimate estimate(PurchasePath mode, Readings readings) {
        Path path = readings.of(mode);
        if (path.failing()) {
            return new Estimate(0, Double.NaN, "failing");
        }
        double shared = Math.max(
                lingerMillis,
                nanToZero(readings.carryingAnswerMillis()) - nanToZero(readings.carryingRoundTripMillis()));
        double answer = shared + path.roundTripMillis();
        double budget = readings.cores() * (1 - readings.steal()) * limits.cpuTarget()
                - path.cpu().fixedCores();
        double perOrder = path.cpu().millisPerOrder() / 1000;
        double cpu = Math.max(0, budget / perOrder);
        double perRefusal = Math.min(readings.refusalCpuMillis() / 1000, perOrder);
        if (readings.offeredPerSecond() > cpu && perRefusal < perOrder) {
            // Offered more than it carries: the refused share the CPU, x orders + (offered - x) refusals.
            cpu = Math.max(0, (budget - perRefusal * readings.offeredPerSecond()) / (perOrder - perRefusal));
        }
        // What the door would see of this path at its capacity: its own round trip, and of the shared queue at
        // most the door's target (in overload the rest is the CPU's queue, which the CPU bound counts).
        double atDoor = Math.min(shared, doorTargetMillis) + path.roundTripMillis();
        double door = atDoor > doorTargetMillis ? doorMinLimit / (atDoor / 1000) : Double.POSITIVE_INFINITY;
        return door < cpu ? new Estimate(door, answer, "door") : new Estimate(cpu, answer, "cpu");
    }

    Choice choose(Readings readings, PurchasePath current) {
        Path sync = readings.sync();
        Path async = readings.async();
        Estimate s = estimate(PurchasePath.SYNC, readings);
        Estimate a = estimate(PurchasePath.ASYNC, readings);
        double offered = readings.offeredPerSecond();
        String estimates = describe(offered, s, a);
        if (sync.failing()) {
            return async.failing()
                    ? new Choice(current, Why.FAILING, "both failing, the crowd stays: " + sync.failure())
                    : new Choice(PurchasePath.ASYNC, Why.FAILING, "SYNC failing: " + sync.failure());
        }
        // The hysteresis: SYNC keeps the crowd with the headroom and takes it back with the return headroom;
        // ASYNC takes it for its answer only with the return headroom (a switch must buy that much) and
        // keeps it with none.
        boolean inSync = current == PurchasePath.SYNC;
        double k = inSync ? 1 + limits.headroom() : 1 + limits.returnHeadroom();
        double j = inSync ? 1 + limits.returnHeadroom() : 1;
        boolean syncCarries = s.capacity() >= k * offered;
        boolean syncAnswers = !(k * s.answerMillis() > objectiveMillis); // unmeasured: within
        if (async.failing()) {
            return new Choice(PurchasePath.SYNC, Why.FAILING, "ASYNC failing: " + async.failure());
        }
        if (syncCarries && syncAnswers) {
            return new Choice(
                    PurchasePath.SYNC,
                    inSync ? Why.CAPACITY : Why.ANSWER,
                    String.format(Locale.ROOT, "SYNC carries it with %.0f%% headroom in time: ", 100 * (k - 1))
                            + estimates);
        }
        double bar = Double.isNaN(s.answerMillis()) ? objectiveMillis : Math.min(objectiveMillis, s.answerMillis());
        boolean asyncFits = a.capacity() >= j * offered && !(j * a.answerMillis() > bar);
        if (asyncFits && syncCarries) {
            return new Choice(PurchasePath.ASYNC, Why.ANSWER, "SYNC answers too slowly, ASYNC in time: " + estimates);
        }
        if (asyncFits || a.capacity() > j * s.capacity()) {
            return new Choice(
                    PurchasePath.ASYNC, Why.CAPACITY, "SYNC short of capacity, ASYNC carries more: " + estimates);
        }
        // SYNC carries it, ASYNC answers no better: no hurry, as for an answer (ASYNC's just after a move
        // carries the switch's own transient); neither carries it, SYNC as much: soon.
        return syncCarries
                ? new Choice(PurchasePath.SYNC, Why.ANSWER, "SYNC answers too slowly, ASYNC no better: " + estimates)
                : new Choice(PurchasePath.SYNC, Why.CAPACITY, "neither carries it, SYNC as much: " + estimates);
    }

    private static String describe(double offered, Estimate s, Estimate a) {
        return String.format(
                Locale.ROOT,
                "offered %.0f/s; SYNC %.0f/s (%s) answering in %.1f ms; ASYNC %.0f/s (%s) answering in %.1f ms",
                offered,
                s.capacity(),
                s.bound(),
                s.answerMillis(),
                a.capacity(),
                a.bound(),
                a.answerMillis());
    }

    private static double nanToZero(double value) {
        return Double.isNaN(value) ? 0 : value;
    }
}
