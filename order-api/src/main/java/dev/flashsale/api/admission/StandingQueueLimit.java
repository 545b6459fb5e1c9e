package dev.flashsale.api.admission;

import com.netflix.concurrency.limits.limit.AbstractLimit;

/**
 * A concurrency limit that reacts to a standing queue, not to a burst, in the manner of CoDel: every
 * {@code interval} it looks at the fastest purchase that completed. If even that one took longer than
 * {@code target}, every request is queueing — for CPU, connections or a slow store — and the limit drops
 * to the number in flight that would meet the target at this rate (Little's law: in flight × target /
 * fastest), never below {@code minLimit}. Otherwise it grows back by a quarter per interval, up to
 * {@code maxLimit}. A burst, however large, whose first purchases complete fast is let through whole.
 *
 * <p>Plugged into Netflix concurrency-limits' {@code SimpleLimiter}, which counts what is in flight and
 * calls {@link #onSample} (synchronized) for each purchase that completed.
 */
final class StandingQueueLimit extends AbstractLimit {

    private final long targetNanos;
    private final long intervalNanos;
    private final int minLimit;
    private final int maxLimit;
    private long intervalStart;
    private long fastest = Long.MAX_VALUE;
    private int mostInFlight;

    StandingQueueLimit(long targetNanos, long intervalNanos, int minLimit, int maxLimit) {
        super(maxLimit);
        this.targetNanos = targetNanos;
        this.intervalNanos = intervalNanos;
        this.minLimit = minLimit;
        this.maxLimit = maxLimit;
    }

    @Override
    protected int _update(long startTime, long rtt, int inflight, boolean didDrop) {
        long now = startTime + rtt;
        fastest = Math.min(fastest, rtt);
        mostInFlight = Math.max(mostInFlight, inflight);
        if (intervalStart == 0) {
            intervalStart = now;
        }
        int limit = getLimit();
        if (now - intervalStart < intervalNanos) {
            return limit;
        }
        int next;
        if (fastest > targetNanos && mostInFlight > minLimit) {
            next = Math.min(limit, (int) (mostInFlight * (double) targetNanos / fastest));
        } else {
            next = limit + Math.max(1, limit / 4);
        }
        intervalStart = now;
        fastest = Long.MAX_VALUE;
        mostInFlight = 0;
        return Math.clamp(next, minLimit, maxLimit);
    }
}
