package dev.flashsale.api;

import java.lang.management.ManagementFactory;
import java.util.function.DoubleSupplier;

/**
 * The box's CPU load over the JVM's last interval, 0..1, all processes counted (a purchase's cost includes
 * Postgres, Redis, the broker and the worker): the container's when the JVM runs under a CPU limit, else the
 * machine's. NaN when the JVM cannot tell. The door's CPU shedding and AUTO's model read this one figure.
 */
public final class CpuLoad {

    private CpuLoad() {}

    public static DoubleSupplier ofTheBox() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return () -> known(os.getCpuLoad());
        }
        return () -> Double.NaN;
    }

    /** The JVM answers a negative load when it has none yet (the first call, or no such counter). */
    static double known(double load) {
        return load < 0 ? Double.NaN : load;
    }
}
