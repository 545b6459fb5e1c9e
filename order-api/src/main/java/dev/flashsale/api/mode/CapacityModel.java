package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.util.Locale;

/**
 * AUTO's model of the two paths, free of I/O: from one sample's {@link Readings}, what each path could
 * carry and how fast it would answer, and which path should carry the crowd.
 *
 * <ul>
 *   <li><b>Answer</b> of a path = what both paths share (the carrying path's whole answer less its round
 *       trip: the reservation, the linger, the wait for a round, the CPU's queue) + the path's own round trip
 *       (SYNC: the commit; ASYNC: publish, confirm, mark PUBLISHED), rehearsed alike for both paths: a path
 *       carrying a crowd is never compared with an idle one.
 *   <li><b>Capacity</b> of a path = the least of two bounds. CPU: {@code (cores × cpu-target − idle cores) /
 *       CPU per order}, and when more is offered than that, the refused purchases' CPU shares the budget. The
 *       door, by Little's law: a path slower at the door than the door's target (its round trip, and of the
 *       shared queue at most the target: beyond it the queue is the CPU's, which the CPU bound counts) meets
 *       a door held at its minimum limit, so it carries at most {@code min-limit / that time} (at 200 ms of
 *       Postgres latency, 32 / 1 s). The group commit's own bound ({@code committers × batch / round
 *       trip}) is never the lower one: the door's minimum limit (32) is below a batch of four committers.
 *   <li><b>Choice</b>: a failing path (breaker open, or failure rate at the limit) gives the crowd to the
 *       other at once. Otherwise, of the paths that can carry the offered rate (the current path as is, the
 *       other with {@code headroom} more), SYNC unless its answer is slower than
 *       {@code answer-ratio × ASYNC's + answer-margin}; when neither can, the larger capacity (SYNC unless
 *       ASYNC's is {@code headroom} larger).
 * </ul>
 */
final class CapacityModel {

    /** What one sample measured of a path; NaN where nothing was measured. */
    record Path(double roundTripMillis, double cpuMillisPerOrder, boolean failing, String failure) {}

    /**
     * One sample: the offered rate (arrivals, the door's refusals included), the whole answer of the path
     * carrying the crowd and its round trip (what both paths share is their difference), the box's cores
     * and the cores busy at idle.
     */
    record Readings(
            double offeredPerSecond,
            PurchasePath carrying,
            double carryingAnswerMillis,
            double carryingRoundTripMillis,
            int cores,
            double idleCores,
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
        /** The other path's dependency fails: move at once. */
        FAILING,
        /** The path carrying the crowd cannot carry it, or carries less: move soon. */
        CAPACITY,
        /** Both carry it; one answers better: move when the model has said so for a while. */
        ANSWER
    }

    private final AutoModeProperties limits;
    private final double doorTargetMillis;
    private final int doorMinLimit;

    CapacityModel(AutoModeProperties limits, double doorTargetMillis, int doorMinLimit) {
        this.limits = limits;
        this.doorTargetMillis = doorTargetMillis;
        this.doorMinLimit = doorMinLimit;
    }

    Estimate estimate(PurchasePath mode, Readings readings) {
        Path path = readings.of(mode);
        if (path.failing()) {
            return new Estimate(0, Double.NaN, "failing");
        }
        double shared =
                Math.max(0, nanToZero(readings.carryingAnswerMillis()) - nanToZero(readings.carryingRoundTripMillis()));
        double answer = shared + path.roundTripMillis();
        double budget = Math.max(0, readings.cores() * limits.cpuTarget() - readings.idleCores());
        double perOrder = path.cpuMillisPerOrder() / 1000;
        double cpu = budget / perOrder;
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
        if (sync.failing() && !async.failing()) {
            return new Choice(PurchasePath.ASYNC, Why.FAILING, "SYNC failing: " + sync.failure());
        }
        if (async.failing() && !sync.failing()) {
            return new Choice(PurchasePath.SYNC, Why.FAILING, "ASYNC failing: " + async.failure());
        }
        Estimate s = estimate(PurchasePath.SYNC, readings);
        Estimate a = estimate(PurchasePath.ASYNC, readings);
        double offered = readings.offeredPerSecond();
        boolean syncCarries = s.capacity() >= offered * (current == PurchasePath.SYNC ? 1 : 1 + limits.headroom());
        boolean asyncCarries = a.capacity() >= offered * (current == PurchasePath.ASYNC ? 1 : 1 + limits.headroom());
        String estimates = describe(offered, s, a);
        if (syncCarries && asyncCarries) {
            double bound = limits.answerRatio() * a.answerMillis()
                    + limits.answerMargin().toNanos() / 1e6;
            // Unknown answers (nothing measured yet) compare as equal: SYNC.
            return s.answerMillis() > bound
                    ? new Choice(PurchasePath.ASYNC, Why.ANSWER, "both carry it, ASYNC answers faster: " + estimates)
                    : new Choice(PurchasePath.SYNC, Why.ANSWER, "both carry it, SYNC answers as fast: " + estimates);
        }
        if (syncCarries != asyncCarries) {
            PurchasePath only = syncCarries ? PurchasePath.SYNC : PurchasePath.ASYNC;
            return new Choice(only, Why.CAPACITY, "only " + only + " carries it: " + estimates);
        }
        return a.capacity() > s.capacity() * (1 + limits.headroom())
                ? new Choice(PurchasePath.ASYNC, Why.CAPACITY, "neither carries it, ASYNC carries more: " + estimates)
                : new Choice(PurchasePath.SYNC, Why.CAPACITY, "neither carries it, SYNC carries as much: " + estimates);
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
