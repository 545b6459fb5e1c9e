package dev.flashsale.api.door;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Places for the arrivals behind a sale's full line, handed out by this instance from a block of places it
 * took from the line in one script call, so that a crowd behind the stock costs no Redis round trip per
 * arrival. Used only while a new place would not be served: such a place matters only if the front ever
 * moves on that far, a quiet round later at the soonest. A block serves for at most {@code window} from when
 * it was taken, so two arrivals at different instances are out of order by at most that long; within an
 * instance, places follow arrival order. A block is sized for a window of arrivals at the rate its
 * predecessor was used, so a quiet sale takes one place per call and a crowd a few dozen. Once a block is
 * three quarters through its places or its window, the next one is taken ahead ({@link #due}, {@link
 * #spare}) off the arrivals' path, so that a crowd's arrivals do not wait for Redis either. One block is
 * taken at a time; places left in a block that ran out of time are never handed out (the line counts them
 * as places that gave up), at most a window's arrivals and a spare block.
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
    private final Map<Long, Block> spares = new ConcurrentHashMap<>();
    /** The sale's block being taken, done when it is (or when taking it failed). */
    private final Map<Long, CompletableFuture<Void>> refilling = new ConcurrentHashMap<>();

    PlaceBlocks(Duration window) {
        this.windowNanos = window.toNanos();
    }

    boolean enabled() {
        return windowNanos > 0;
    }

    /**
     * A place for {@code quantity} units from the sale's block, or from the spare taken ahead once the block
     * is used up or out of time; empty when a block must be taken.
     */
    OptionalLong take(long saleId, int quantity, long nowNanos) {
        OptionalLong place = takeFrom(blocks.get(saleId), quantity, nowNanos);
        if (place.isPresent()) {
            return place;
        }
        Block spare = spares.remove(saleId);
        if (spare == null) {
            return OptionalLong.empty();
        }
        blocks.put(saleId, spare);
        return takeFrom(spare, quantity, nowNanos);
    }

    private OptionalLong takeFrom(@Nullable Block block, int quantity, long nowNanos) {
        if (block == null || nowNanos - block.takenNanos() > windowNanos) {
            return OptionalLong.empty();
        }
        long place = block.next().getAndAdd(quantity);
        return place + quantity <= block.to() ? OptionalLong.of(place) : OptionalLong.empty();
    }

    /**
     * Whether the sale's next block should be taken ahead now: its block in use is three quarters through its
     * places or its window, and no spare is waiting.
     */
    boolean due(long saleId, long nowNanos) {
        Block block = blocks.get(saleId);
        if (block == null || spares.containsKey(saleId)) {
            return false;
        }
        long used = Math.min(block.next().get(), block.to()) - block.from();
        return 4 * (nowNanos - block.takenNanos()) >= 3 * windowNanos || 4 * used >= 3 * (block.to() - block.from());
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
     * The units of a block taken ahead ({@link #due}): it serves from when the block in use ends, a quarter of
     * a window after it was taken at the latest, to its own window's end, so it is sized for three quarters of
     * a window at the block in use's rate.
     */
    long sizeAhead(long saleId, long nowNanos) {
        return Math.max(1, size(saleId, 1, nowNanos) * 3 / 4);
    }

    /**
     * Whether this caller may take the sale's next block: one at a time, so that arrivals racing for a new
     * block do not each take one and leave the rest unused (every unused place is one the front must pass).
     * A caller told no waits for that block ({@link #awaitRefill}); one told yes calls {@link #refilled} when
     * done.
     */
    boolean refill(long saleId) {
        return refilling.putIfAbsent(saleId, new CompletableFuture<>()) == null;
    }

    void refilled(long saleId) {
        CompletableFuture<Void> taking = refilling.remove(saleId);
        if (taking != null) {
            taking.complete(null);
        }
    }

    /**
     * Waits at most {@code timeout} for the sale's block being taken, if one is: a Redis round trip for the
     * block, instead of one for each arrival meanwhile. False when it did not come in time.
     */
    boolean awaitRefill(long saleId, Duration timeout) {
        CompletableFuture<Void> taking = refilling.get(saleId);
        if (taking == null) {
            return true;
        }
        try {
            taking.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException | ExecutionException late) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
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

    /**
     * Keeps the places {@code [from, to)} of a block taken ahead, to be handed out once the sale's block in
     * use is used up or out of time; its window counts from {@code nowNanos}, when it was taken.
     */
    void spare(long saleId, long from, long to, long nowNanos) {
        spares.put(saleId, new Block(from, to, new AtomicLong(from), nowNanos));
    }

    /** Forgets the sale's blocks: its line is no longer read here. */
    void forget(long saleId) {
        blocks.remove(saleId);
        spares.remove(saleId);
        refilled(saleId);
    }
}
