package dev.flashsale.api.door;

import dev.flashsale.common.stock.SaleLines.Front;
import dev.flashsale.common.stock.SaleLines.Joined;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * Places for the arrivals behind a sale's full line, handed out by this instance from a block of places it
 * took from the line in one script call, so that a crowd behind the stock costs no Redis round trip per
 * arrival. Used only while a new place would not be served: such a place matters only if the front ever
 * moves on that far, a quiet round later at the soonest. A block serves for at most {@code window} after its
 * call returned, so two arrivals at different instances are out of order by at most that long plus the
 * call; within an instance, places follow arrival order, but for the arrivals that waited for a block
 * together. A block is sized for a window of arrivals at the rate its predecessor was used, so a quiet sale
 * takes one place per call and a crowd a few dozen. One block is taken at a time, and arrivals that find the
 * block spent meanwhile wait for the next one rather than each call Redis. Places left in a block that ran
 * out of time are never handed out (the line counts them as places that gave up), at most a window's
 * arrivals.
 */
final class PlaceBlocks {

    /** The most places one block takes: a bound on the places a dying instance leaves unused. */
    static final int MAX_UNITS = 256;

    /** The longest an arrival waits for another's call to bring a block of places (Redis answers in ms). */
    private static final Duration WAIT = Duration.ofMillis(250);

    /**
     * Places {@code [from, to)}, asked for at {@code askedNanos} and handed out from {@code takenNanos}, when
     * the call that took them returned.
     */
    private record Block(long from, long to, AtomicLong next, long askedNanos, long takenNanos) {

        /**
         * The rate its units went at up to {@code nowNanos}, per nanosecond: counted from when it was asked
         * for, as the arrivals that waited for it came during its call.
         */
        double rate(long nowNanos) {
            long used = Math.min(next.get(), to) - from;
            return used / (double) Math.max(1_000_000, nowNanos - askedNanos);
        }
    }

    private final long windowNanos;
    private final Map<Long, Block> blocks = new ConcurrentHashMap<>();
    private final Map<Long, CompletableFuture<Void>> refills = new ConcurrentHashMap<>();

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
     * A place for {@code quantity} units behind the sale's full line ({@code reading}: this instance's reading
     * of the line, which the place carries): from the sale's block. When the block is spent, this caller takes
     * the next one with {@code join} (given the units to take; one call, whose place is the block's first), or
     * waits for the call of the caller already taking it: one block at a time, so that arrivals racing for a
     * new block do not each take one and leave the rest unused (every unused place is one the front must
     * pass), nor each make a call of their own. After two such waits without a place, the caller joins on its
     * own ({@code alone}).
     */
    Optional<Joined> place(
            long saleId,
            int quantity,
            Front reading,
            LongFunction<Optional<Joined>> join,
            Supplier<Optional<Joined>> alone) {
        for (int waits = 0; waits < 2; waits++) {
            OptionalLong place = take(saleId, quantity, System.nanoTime());
            if (place.isPresent()) {
                return Optional.of(new Joined(place.getAsLong(), reading));
            }
            CompletableFuture<Void> turn = new CompletableFuture<>();
            CompletableFuture<Void> underWay = refills.putIfAbsent(saleId, turn);
            if (underWay == null) {
                return takeNext(saleId, quantity, reading, join, turn);
            }
            if (!awaited(underWay)) {
                break;
            }
        }
        return alone.get();
    }

    /**
     * This caller's {@code turn} at taking the sale's next block; those waiting for it are woken when it ends.
     * Only this turn is ended: a sale forgotten meanwhile may have begun another.
     */
    private Optional<Joined> takeNext(
            long saleId,
            int quantity,
            Front reading,
            LongFunction<Optional<Joined>> join,
            CompletableFuture<Void> turn) {
        try {
            long asked = System.nanoTime();
            OptionalLong place = take(saleId, quantity, asked);
            if (place.isPresent()) { // the turn before this one brought a block just now
                return Optional.of(new Joined(place.getAsLong(), reading));
            }
            long units = size(saleId, quantity, asked);
            Optional<Joined> joined = join.apply(units);
            joined.ifPresent(
                    block -> taken(saleId, block.place(), block.place() + units, quantity, asked, System.nanoTime()));
            return joined;
        } finally {
            refills.remove(saleId, turn);
            turn.complete(null);
        }
    }

    /** Waits for a block being taken, at most {@link #WAIT}: false when it took longer. */
    private static boolean awaited(CompletableFuture<Void> refill) {
        try {
            refill.get(WAIT.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException | ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Keeps the places {@code [from, to)} of a block asked for at {@code askedNanos} and taken at {@code
     * takenNanos}, the first {@code quantity} of which went to the purchase that took it. A block taken
     * meanwhile by another purchase is replaced: its places left are not handed out.
     */
    void taken(long saleId, long from, long to, int quantity, long askedNanos, long takenNanos) {
        blocks.put(saleId, new Block(from, to, new AtomicLong(from + quantity), askedNanos, takenNanos));
    }

    /** Forgets the sale's block: its line is no longer read here. */
    void forget(long saleId) {
        blocks.remove(saleId);
        CompletableFuture<Void> turn = refills.remove(saleId);
        if (turn != null) {
            turn.complete(null);
        }
    }
}
