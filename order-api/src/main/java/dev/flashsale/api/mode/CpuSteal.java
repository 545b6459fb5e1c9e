package dev.flashsale.api.mode;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.DoubleSupplier;

/**
 * The share of the box's CPU time the hypervisor stole since the last reading, from the first line of
 * {@code /proc/stat} ({@code cpu user nice system idle iowait irq softirq steal ...}, in ticks): the steal
 * ticks over all ticks. The JVM's CPU load counts steal neither as busy nor as time the cores had, so a
 * busy box under steal reads as a dearer order; AUTO takes it out with this figure. NaN where the file
 * cannot be read (not Linux) and at the first reading. Not thread-safe: the sampler alone calls it.
 */
final class CpuSteal implements DoubleSupplier {

    private static final int STEAL = 8;

    private final Path stat;
    private long lastSteal = -1;
    private long lastTotal;

    CpuSteal(Path stat) {
        this.stat = stat;
    }

    static CpuSteal ofTheBox() {
        return new CpuSteal(Path.of("/proc/stat"));
    }

    @Override
    public double getAsDouble() {
        long[] ticks = read();
        if (ticks.length <= STEAL) {
            return Double.NaN;
        }
        long total = 0;
        for (int i = 1; i < ticks.length && i <= STEAL; i++) {
            total += ticks[i];
        }
        long steal = ticks[STEAL];
        boolean first = lastSteal < 0;
        double share = first || total <= lastTotal ? Double.NaN : (double) (steal - lastSteal) / (total - lastTotal);
        lastSteal = steal;
        lastTotal = total;
        return share;
    }

    /** The first line's fields, the label at 0 counted as 0; empty when unreadable. */
    private long[] read() {
        try (BufferedReader reader = Files.newBufferedReader(stat)) {
            String line = reader.readLine();
            if (line == null || !line.startsWith("cpu ")) {
                return new long[0];
            }
            String[] fields = line.trim().split("\\s+");
            long[] ticks = new long[fields.length];
            for (int i = 1; i < fields.length; i++) {
                ticks[i] = Long.parseLong(fields[i]);
            }
            return ticks;
        } catch (IOException | NumberFormatException e) {
            return new long[0];
        }
    }
}
