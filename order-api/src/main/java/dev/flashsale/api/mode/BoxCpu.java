package dev.flashsale.api.mode;

import dev.flashsale.api.CpuLoad;
import java.util.function.DoubleSupplier;

/**
 * What AUTO reads of the box's CPU: its load (busy over the time the cores ran, 0..1, NaN when unknown), the
 * share of the cores' time the hypervisor stole meanwhile (0..1, NaN when unknown), and its cores. A seam:
 * the simulator drives all three.
 */
record BoxCpu(DoubleSupplier load, DoubleSupplier steal, int cores) {

    static BoxCpu ofTheBox() {
        return new BoxCpu(
                CpuLoad.ofTheBox(), CpuSteal.ofTheBox(), Runtime.getRuntime().availableProcessors());
    }
}
