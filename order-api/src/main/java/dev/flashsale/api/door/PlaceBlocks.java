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
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

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
 *
 * <p>In a crowd (a block of {@link #AHEAD_FROM} places or more), the next block is taken ahead, on a thread of
 * its own, once the block in use is three quarters through its places or its window: it waits as a spare and takes over
 * when that one is spent or out of time, so the crowd's arrivals do not wait for Redis. It serves from then to
 * its own window's end, about three quarters of a window, and is sized for that. Waiting for a call
 * made on an arrival's virtual thread cost a crowd's first attempts their tail: on a saturated box that thread
 * waited behind the crowd's to run again (p99 214 ms against ping's 10 ms).
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

    /** The smallest block whose successor is taken ahead: a quiet sale takes one on an arrival's path. */
    static final int AHEAD_FROM = 4;

    private final long windowNanos;
    private final @Nullable Executor ahead;
    private final Map<Long, Block> blocks = new ConcurrentHashMap<>();
    private final Map<Long, Block> spares = new ConcurrentHashMap<>();
    private final Map<Long, CompletableFuture<Void>> refills = new ConcurrentHashMap<>();

    /** Blocks taken on arrivals' paths only. */
    PlaceBlocks(Duration window) {
        this(window, null);
    }

    /** Blocks taken ahead on {@code ahead} in a crowd (null: on arrivals' paths only). */
    PlaceBlocks(Duration window, @Nullable Executor ahead) {
        this.windowNanos = window.toNanos();
        this.ahead = ahead;
    }

    boolean enabled() {
        return windowNanos > 0;
    }

    /**
     * A place for {@code quantity} units from the sale's block, or from the spare taken ahead once that block
     * is spent or out of time; empty when a block must be taken.
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
        // Its rate counts from now, when it begins to serve; its window from when its call returned.
        Block serving = new Block(spare.from(), spare.to(), spare.next(), nowNanos, spare.takenNanos());
        blocks.put(saleId, serving);
        return takeFrom(serving, quantity, nowNanos);
    }

    private OptionalLong takeFrom(@Nullable Block block, int quantity, long nowNanos) {
        if (block == null || nowNanos - block.takenNanos() > windowNanos) {
            return OptionalLong.empty();
        }
        long place = block.next().getAndAdd(quantity);
        return place + quantity <= block.to() ? OptionalLong.of(place) : OptionalLong.empty();
    }

    /**
     * Whether the sale's next block should be taken ahead now: a crowd's block in use is three quarters
     * through its places or its window, and no spare waits and no block is being taken.
     */
    boolean due(long saleId, long nowNanos) {
        Block block = blocks.get(saleId);
        if (ahead == null
                || block == null
                || block.to() - block.from() < AHEAD_FROM
                || spares.containsKey(saleId)
                || refills.containsKey(saleId)) {
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
            long now = System.nanoTime();
            OptionalLong place = take(saleId, quantity, now);
            if (place.isPresent()) {
                if (due(saleId, now)) {
                    takeAhead(saleId, join);
                }
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

    /**
     * Takes the sale's next block on the thread for it, as a spare: sized for three quarters of a window at the
     * rate the block in use goes (what it serves). Arrivals that find the block spent meanwhile wait for this call as for one
     * an arrival makes. If Redis does not answer, the next arrival to find no place takes a block itself.
     */
    private void takeAhead(long saleId, LongFunction<Optional<Joined>> join) {
        CompletableFuture<Void> turn = new CompletableFuture<>();
        if (ahead == null || refills.putIfAbsent(saleId, turn) != null) {
            return; // being taken already
        }
        Runnable ended = () -> {
            refills.remove(saleId, turn);
            turn.complete(null);
        };
        try {
            ahead.execute(() -> {
                try {
                    long asked = System.nanoTime();
                    long units = Math.max(1, size(saleId, 1, asked) * 3 / 4);
                    join.apply(units)
                            .ifPresent(block -> spares.put(
                                    saleId,
                                    new Block(
                                            block.place(),
                                            block.place() + units,
                                            new AtomicLong(block.place()),
                                            asked,
                                            System.nanoTime())));
                } catch (RuntimeException redisDown) {
                    // the next arrival to find no place takes a block itself
                } finally {
                    ended.run();
                }
            });
        } catch (RejectedExecutionException closing) {
            ended.run();
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

    /** Forgets the sale's blocks: its line is no longer read here. */
    void forget(long saleId) {
        blocks.remove(saleId);
        spares.remove(saleId);
        CompletableFuture<Void> turn = refills.remove(saleId);
        if (turn != null) {
            turn.complete(null);
        }
    }
}
