package dev.flashsale.api.mode;

/**
 * What a path costs the box's CPU as a line against its rate: {@code busy cores = fixedCores +
 * millisPerOrder / 1000 × orders per second}, all processes, the stolen time taken out. So CPU per order
 * falls with the rate when the fixed part is large, and a crowd at a new rate is priced by the line, not by
 * the average of the rates seen.
 */
record CpuCost(double fixedCores, double millisPerOrder) {

    /** Cores busy carrying {@code perSecond} orders. */
    double coresAt(double perSecond) {
        return fixedCores + millisPerOrder / 1000 * perSecond;
    }
}
