package dev.flashsale.api.door;

import com.netflix.concurrency.limits.Limiter;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Purchases waiting at a full door, served in arrival order. Without it, a full door refuses the
 * shoppers who arrive while it is full and lets in whoever arrives when a place frees: in a flash sale
 * units then go to later arrivals while earlier ones were told 503. In line, the head takes the next free
 * place; nobody passes the line; a purchase leaves it at once when its sale turns out sold out (it is then
 * refused from memory, like any purchase of a sold-out sale), and gives up after a bounded wait (503).
 */
final class WaitingLine {

    /**
     * The head checks for a place this often even when no release woke it. Behind it nobody polls: a
     * purchase waits to become the head (woken by the one before it leaving) or for its deadline. Thousands
     * wait in a flash sale, and polling them all cost the CPU that sells the units; when the sale sells
     * out, the head leaves at once and wakes everyone behind it to look.
     */
    private static final long HEAD_POLL_NANOS = 5_000_000;

    /** How a wait in line ended. */
    sealed interface Turn {
        /** A place at the door: the purchase goes in, and reports to the listener. */
        record Admitted(Limiter.Listener listener) implements Turn {}

        /** The sale is refused from memory now: the purchase goes in without a place. */
        record Refused() implements Turn {}

        /** The wait ran out: 503. */
        record TimedOut() implements Turn {}
    }

    private final ConcurrentLinkedQueue<Thread> line = new ConcurrentLinkedQueue<>();
    private final AtomicInteger waiting = new AtomicInteger();
    private final long maxWaitNanos;
    private final int maxWaiting;

    WaitingLine(long maxWaitNanos, int maxWaiting) {
        this.maxWaitNanos = maxWaitNanos;
        this.maxWaiting = maxWaiting;
    }

    boolean isEmpty() {
        return waiting.get() == 0;
    }

    int size() {
        return waiting.get();
    }

    /**
     * Joins the line unless it holds {@code capacity} purchases already (then empty), and waits for a place
     * ({@code place}), for the sale to be refused from memory ({@code refused}), or for the wait to run out.
     */
    Optional<Turn> await(long capacity, Supplier<Optional<Limiter.Listener>> place, BooleanSupplier refused) {
        if (waiting.incrementAndGet() > Math.min(capacity, maxWaiting)) {
            waiting.decrementAndGet();
            return Optional.empty();
        }
        Thread me = Thread.currentThread();
        line.add(me);
        long deadline = System.nanoTime() + maxWaitNanos;
        try {
            while (true) {
                if (refused.getAsBoolean()) {
                    // Everyone behind may be waiting for the same sale: all look now, not one by one.
                    line.forEach(LockSupport::unpark);
                    return Optional.of(new Turn.Refused());
                }
                boolean head = line.peek() == me;
                if (head) {
                    Optional<Limiter.Listener> admitted = place.get();
                    if (admitted.isPresent()) {
                        return Optional.of(new Turn.Admitted(admitted.get()));
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Optional.of(new Turn.TimedOut());
                }
                LockSupport.parkNanos(this, head ? Math.min(left, HEAD_POLL_NANOS) : left);
            }
        } finally {
            line.remove(me);
            waiting.decrementAndGet();
            wakeHead();
        }
    }

    /** A place may have freed: the head of the line tries for it. */
    void wakeHead() {
        Thread head = line.peek();
        if (head != null) {
            LockSupport.unpark(head);
        }
    }
}
