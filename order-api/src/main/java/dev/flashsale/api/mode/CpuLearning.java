package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.util.EnumMap;
import java.util.Map;

/**
 * What AUTO learns of the box's CPU, once per sample: the busy cores are {@code load × cores × (1 − steal)},
 * the stolen time taken out, so a neighbour's steal never reads as a dearer order. Each path's {@link
 * CpuCost} is the least-squares line of busy cores against orders per second over its last {@link #WINDOW}
 * samples in which it carried at least 90 % of the orders, at a rate worth measuring, with nothing refused,
 * at most a few requests per order and the CPU below its target; the cores busy at idle are one more point
 * of that line (at rate 0), so a crowd held at one rate still gives a line through the idle box, and a ramp
 * gives the fixed part its own. A path not carrying the crowd keeps its line. One never learnt costs the other's line plus the
 * difference of their priors ({@code sync-cpu}, {@code async-cpu}: the bench's), or its prior while neither
 * was. Also learnt: the cores busy at idle, the steal (smoothed, for the budget) and, in overload, the CPU
 * per refused purchase. Not thread-safe: the sampler alone calls it.
 */
final class CpuLearning {

    /** Orders per second below which a sample says nothing of CPU per order. */
    private static final double LEARNING_RATE_FLOOR = 50;
    /** Arrivals (and requests) per second below which the box counts as idle (its CPU then is the idle cores). */
    private static final double IDLE_RATE = 2;
    /**
     * Requests per order above which a sample is not learnt from: an ASYNC order brings its status polls (a
     * few), a crowd at a line or a sold-out sale tens of answers per order.
     */
    private static final long ORDER_SHARE_FLOOR = 5;
    /** Weight of one sample in the smoothed figures (idle cores, steal, CPU per refusal). */
    private static final double LEARNING_WEIGHT = 0.1;
    /** Weight of an idle sample above the idle cores learnt so far. */
    private static final double IDLE_RISE_WEIGHT = LEARNING_WEIGHT / 10;
    /** Samples a path's line is fitted on: 10 s at the default sample interval. */
    static final int WINDOW = 50;

    /** One path's samples of (orders per second, busy cores), a ring of {@link #WINDOW}. */
    private static final class Line {
        final double prior;
        final double[] rates = new double[WINDOW];
        final double[] busy = new double[WINDOW];
        int size;
        int next;

        Line(double prior) {
            this.prior = prior;
        }

        void add(double rate, double cores) {
            rates[next] = rate;
            busy[next] = cores;
            next = (next + 1) % WINDOW;
            size = Math.min(WINDOW, size + 1);
        }

        /** The least-squares line through the samples and (0, idle cores); null before any sample. */
        CpuCost fit(double idleCores) {
            if (size == 0) {
                return null;
            }
            double sumRates = 0;
            double sumBusy = 0;
            for (int i = 0; i < size; i++) {
                sumRates += rates[i];
                sumBusy += busy[i];
            }
            double meanRate = sumRates / (size + 1);
            double meanBusy = (sumBusy + idleCores) / (size + 1);
            double xx = meanRate * meanRate;
            double xy = -meanRate * (idleCores - meanBusy);
            for (int i = 0; i < size; i++) {
                xx += (rates[i] - meanRate) * (rates[i] - meanRate);
                xy += (rates[i] - meanRate) * (busy[i] - meanBusy);
            }
            double slope = xy / xx;
            double fixed = meanBusy - slope * meanRate;
            if (fixed < 0) {
                // A line below the idle box: nothing fixed, every busy core the orders'.
                fixed = 0;
                slope = sumBusy / sumRates;
            }
            return slope > 0 ? new CpuCost(fixed, slope * 1000) : null;
        }
    }

    private final BoxCpu box;
    private final double cpuTarget;
    private final Map<PurchasePath, Line> lines = new EnumMap<>(PurchasePath.class);
    private double idleCores;
    private double steal;
    /** CPU per purchase refused at the door or by a path (ms), learnt in overload; until then the prior. */
    private double refusalCpuMillis;

    CpuLearning(AutoModeProperties limits, BoxCpu box) {
        this.box = box;
        this.cpuTarget = limits.cpuTarget();
        this.refusalCpuMillis = limits.refusalCpu().toNanos() / 1e6;
        lines.put(PurchasePath.SYNC, new Line(limits.syncCpu().toNanos() / 1e6));
        lines.put(PurchasePath.ASYNC, new Line(limits.asyncCpu().toNanos() / 1e6));
    }

    /**
     * One sample of {@code seconds}: what arrived, what the door refused, what each path carried, and every
     * request answered ({@code requests}: refusals from memory, line answers, polls). The box is idle only
     * when neither purchases nor other requests come: a sold-out sale's crowd, answered without a path, is
     * load, and learnt as the idle cores it would make every order look cheaper and the fixed part dearer.
     */
    void learn(double seconds, long arrivals, double refusals, long syncOrders, long asyncOrders, long requests) {
        double load = box.load().getAsDouble();
        if (Double.isNaN(load) || load < 0) {
            return;
        }
        double stolen = box.steal().getAsDouble();
        if (Double.isNaN(stolen) || stolen < 0) {
            stolen = 0;
        }
        steal += LEARNING_WEIGHT * (stolen - steal);
        double busy = load * box.cores() * (1 - stolen);
        long orders = syncOrders + asyncOrders;
        double rate = orders / seconds;
        if (Math.max(arrivals, requests) / seconds < IDLE_RATE && refusals == 0) {
            // The idle box is the least the box burns with nothing coming: a lower reading is learnt at the usual
            // pace, a higher one ten times slower. A JVM's first seconds (class loading, its JIT compiling) and a
            // collection after a crowd pass; a neighbour that stays is learnt in about 20 s.
            idleCores += (busy < idleCores ? LEARNING_WEIGHT : IDLE_RISE_WEIGHT) * (busy - idleCores);
            return;
        }
        PurchasePath carried = syncOrders >= 0.9 * orders
                ? PurchasePath.SYNC
                : asyncOrders >= 0.9 * orders ? PurchasePath.ASYNC : null;
        if (carried == null) {
            return;
        }
        Line line = lines.get(carried);
        double refused = Math.max(0, arrivals + refusals - orders) / seconds;
        CpuCost learnt = line.fit(idleCores);
        if (learnt != null && refused >= LEARNING_RATE_FLOOR) {
            // Overload: what the orders did not use went to the refused.
            double perRefusal = Math.max(0, (busy - learnt.coresAt(rate)) / refused * 1000);
            refusalCpuMillis += LEARNING_WEIGHT * (perRefusal - refusalCpuMillis);
        }
        // A sample whose requests are mostly not the path's orders (a crowd answered by the line, or refused from
        // memory, while a few places buy) says nothing of an order's CPU: its busy cores are the crowd's.
        boolean mostlyOrders = requests <= ORDER_SHARE_FLOOR * orders;
        if (rate >= LEARNING_RATE_FLOOR && refusals == 0 && load < cpuTarget && busy > idleCores && mostlyOrders) {
            line.add(rate, busy);
        }
    }

    /** The path's line; one never learnt is the other's plus the priors' difference, or its prior. */
    CpuCost cost(PurchasePath path) {
        Line line = lines.get(path);
        CpuCost learnt = line.fit(idleCores);
        if (learnt != null) {
            return learnt;
        }
        Line other = lines.get(path == PurchasePath.SYNC ? PurchasePath.ASYNC : PurchasePath.SYNC);
        CpuCost others = other.fit(idleCores);
        return others == null
                ? new CpuCost(idleCores, line.prior)
                : new CpuCost(others.fixedCores(), Math.max(0.01, others.millisPerOrder() + line.prior - other.prior));
    }

    /** The share of the cores stolen, smoothed over about two seconds of samples. */
    double steal() {
        return steal;
    }

    double refusalCpuMillis() {
        return refusalCpuMillis;
    }
}
