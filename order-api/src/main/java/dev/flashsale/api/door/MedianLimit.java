package dev.flashsale.api.door;

import com.netflix.concurrency.limits.limit.AbstractLimit;

/**
 * A concurrency limit that reacts to a standing queue, not to a few slow purchases: every {@code interval}
 * it asks whether most purchases completed in it (the median) took longer than {@code target}. If so, the
 * queue stands — for CPU, connections or a slow store — and the limit drops to the number in flight that
 * would meet the target at this rate (Little's law: in flight × target / mean time), never below
 * {@code minLimit}. Otherwise it grows back by a quarter per interval, up to {@code maxLimit}.
 *
 * <p>The median, not the fastest purchase as in CoDel: requests here do not wait in one FIFO queue but for
 * CPU among virtual threads, the event loops and, on a small box, the load generator. There the fastest
 * purchase of an interval stays fast while most wait, and a limit that read it grew back to the maximum
 * within a second of every cut: on the wire at four times the knee, accepted purchases' p99 was 270–520 ms
 * and refusals' up to 470 ms (docs/results/2026-11-25-door-on-the-wire.md).
 *
 * <p>Plugged into Netflix concurrency-limits' {@code SimpleLimiter}, which counts what is in flight and
 * calls {@link #onSample} (synchronized) for each purchase that completed. Public for AUTO's simulator
 * (order-api tests, {@code mode.Simulator}), which runs this door with a simulated clock.
 */
public final class MedianLimit extends AbstractLimit {

    private final long targetNanos;
    private final long intervalNanos;
    private final int minLimit;
    private final int maxLimit;
    private long intervalStart;
    private int completed;
    private int late;
    private long totalNanos;
    private int mostInFlight;
    private boolean lateBefore;

    public MedianLimit(long targetNanos, long intervalNanos, int minLimit, int maxLimit) {
        super(maxLimit);
        this.targetNanos = targetNanos;
        this.intervalNanos = intervalNanos;
        this.minLimit = minLimit;
        this.maxLimit = maxLimit;
    }

    @Override
    protected int _update(long startTime, long rtt, int inflight, boolean didDrop) {
        long now = startTime + rtt;
        completed++;
        totalNanos += rtt;
        if (rtt > targetNanos) {
            late++;
        }
        mostInFlight = Math.max(mostInFlight, inflight);
        if (intervalStart == 0) {
            intervalStart = now;
        }
        int limit = getLimit();
        if (now - intervalStart < intervalNanos) {
            return limit;
        }
        boolean lateNow = 2 * late > completed;
        int next;
        if (!lateNow) {
            next = limit + Math.max(1, limit / 4);
        } else if (lateBefore && mostInFlight > minLimit) {
            double mean = (double) totalNanos / completed;
            next = Math.min(limit, Math.max(limit / 2, (int) (mostInFlight * targetNanos / mean)));
        } else { // one late interval (a GC pause, a burst arriving) is no standing queue yet
            next = limit;
        }
        lateBefore = lateNow;
        intervalStart = now;
        completed = 0;
        late = 0;
        totalNanos = 0;
        mostInFlight = 0;
        return Math.clamp(next, minLimit, maxLimit);
    }
}
