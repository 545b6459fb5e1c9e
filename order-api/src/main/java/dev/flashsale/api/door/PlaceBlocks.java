package dev.flashsale.api.door;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Places for the arrivals behind a sale's full line, handed out by this instance from a block of places it
 * took from the line in one script call, so that a crowd behind the stock costs no Redis round trip per
 * arrival. Used only while a new place would not be served: such a place matters only if the front ever
 * moves on that far, a quiet round later at the soonest. A block serves for at most {@code window}, so two
 * arrivals at different instances are out of order by at most that long; within an instance, places follow
 * arrival order. A block is sized for a window of arrivals at the rate its predecessor was used, so a quiet
 * sale takes one place per call and a crowd a few dozen. One block is taken at a time; places left in a
 * block that ran out of time are never handed out (the line counts them as places that gave up), at most a
 * window's arrivals.
 */
final class PlaceBlocks {

    /** The most places one block takes: a bound on the places a dying instance leaves unused. */
    static final int MAX_UNITS = 256;

    private record Block(long from, long to, AtomicLong next, long takenNanos) {

        /** The units handed out of it, and the rate they went at up to {@code nowNanos}, per nanosecond. */
        double rate(long nowNanos) {
            long used = Math.min(next.get(), to) - from;
            return used / (double) Math.max(1_000_000, nowNanos - takenNanos);
        }
    }

    private final long windowNanos;
    private final Map<Long, Block> blocks = new ConcurrentHashMap<>();
    private final Map<Long, AtomicBoolean> refilling = new ConcurrentHashMap<>();

    PlaceBlocks(Duration window) {
        this.windowNanos = window.toNanos();
    }

    boolean enabled() {
        return windowNanos > 0;
    }

    /** A place for {@code quantity} units from the sale's block, or empty when a block must be taken. */
    OptionalLong take(long saleId, int quantity, long nowNanos) {
        Block block = blocks.get(saleId);
        if (block == null || nowNanos - block.takenNanos() > windowNanos) {
            return OptionalLong.empty();
        }
        long place = block.next().getAndAdd(quantity);
        return place + quantity <= block.to() ? OptionalLong.of(place) : OptionalLong.empty();
    }

    /**
     * The units the next block of the sale should take for a purchase of {@code quantity}: a window of
     * arrivals at the rate the last block went, at least the purchase's own and at most {@link #MAX_UNITS}.
     */
    long size(long saleId, int quantity, long nowNanos) {
        Block last = blocks.get(saleId);
        long expected = last == null ? 0 : (long) Math.ceil(last.rate(nowNanos) * windowNanos);
        return Math.clamp(expected, quantity, Math.max(quantity, MAX_UNITS));
    }

    /**
     * Whether this caller may take the sale's next block: one at a time, so that arrivals racing for a new
     * block do not each take one and leave the rest unused (every unused place is one the front must pass).
     * A caller told no joins its own place; one told yes calls {@link #refilled} when done.
     */
    boolean refill(long saleId) {
        return refilling.computeIfAbsent(saleId, id -> new AtomicBoolean()).compareAndSet(false, true);
    }

    void refilled(long saleId) {
        AtomicBoolean flag = refilling.get(saleId);
        if (flag != null) {
            flag.set(false);
        }
    }

    /**
     * Keeps the places {@code [from, to)} of a block just taken, the first {@code quantity} of which went to
     * the purchase that took it. A block taken meanwhile by another purchase is replaced: its places left are
     * not handed out.
     */
    void taken(long saleId, long from, long to, int quantity, long nowNanos) {
        blocks.put(saleId, new Block(from, to, new AtomicLong(from + quantity), nowNanos));
    }

    /** Forgets the sale's block: its line is no longer read here. */
    void forget(long saleId) {
        blocks.remove(saleId);
        refilling.remove(saleId);
    }
}
