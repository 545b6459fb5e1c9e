package dev.flashsale.api.door;

import dev.flashsale.common.stock.SaleLines.Front;
import dev.flashsale.common.stock.SaleLines.Joined;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Queue;
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
 * call; within an instance, places follow arrival order. A block is sized for a window of arrivals at the
 * rate its predecessor was used, so a quiet sale takes one place per call and a crowd a few dozen. One block
 * is taken at a time: an arrival that finds the block spent while another takes the next one waits, and the
 * caller hands it its place from the new block before any later arrival gets one, with a call more for those
 * the block did not cover. Places left in a block that ran out of time are never handed out (the line
 * counts them as places that gave up), at most a window's arrivals.
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
    private final Map<Long, Refill> refills = new ConcurrentHashMap<>();

    /** An arrival waiting for a block being taken: its units, and the place the caller taking it hands it. */
    private record Waiter(int quantity, CompletableFuture<OptionalLong> place) {}

    /** A sale's next block, and the arrivals waiting for it in arrival order; guarded by its own monitor. */
    private static final class Refill {
        private boolean underWay;
        private final Queue<Waiter> waiters = new ArrayDeque<>();

        synchronized long waitingUnits() {
            return waiters.stream().mapToLong(Waiter::quantity).sum();
        }
    }

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

    /** The units asked for by the arrivals of the sale waiting for a block now. */
    long waitingUnits(long saleId) {
        Refill refill = refills.get(saleId);
        return refill == null ? 0 : refill.waitingUnits();
    }

    /**
     * A place for {@code quantity} units behind the sale's full line ({@code reading}: this instance's reading
     * of the line, which the place carries): from the sale's block. When the block is spent, this caller takes
     * the next one with {@code join} (given the units to take; one call, whose place is the block's first), or
     * waits for the caller already taking it to hand it a place: one block at a time, so that arrivals racing
     * for a new block do not each take one and leave the rest unused (every unused place is one the front
     * must pass), nor each make a call of their own. An arrival handed no place (the call failed, or took
     * longer than {@link #WAIT}) tries once more, then joins on its own ({@code alone}).
     */
    Optional<Joined> place(
            long saleId,
            int quantity,
            Front reading,
            LongFunction<Optional<Joined>> join,
            Supplier<Optional<Joined>> alone) {
        for (int tries = 0; tries < 2; tries++) {
            OptionalLong place = take(saleId, quantity, System.nanoTime());
            if (place.isPresent()) {
                return Optional.of(new Joined(place.getAsLong(), reading));
            }
            Refill refill = refills.computeIfAbsent(saleId, sale -> new Refill());
            Waiter waiter = new Waiter(quantity, new CompletableFuture<>());
            boolean taker;
            synchronized (refill) {
                taker = !refill.underWay;
                if (taker) {
                    refill.underWay = true;
                } else {
                    refill.waiters.add(waiter);
                }
            }
            if (taker) {
                return takeNext(saleId, quantity, reading, join, refill);
            }
            OptionalLong handed = awaited(waiter.place());
            if (handed.isPresent()) {
                return Optional.of(new Joined(handed.getAsLong(), reading));
            }
        }
        return alone.get();
    }

    /**
     * Takes the sale's next block for this caller and for the arrivals waiting on {@code refill}, in their
     * order, with a call more (at most two) for those the block did not cover; what is left of it serves the
     * arrivals after them. Whoever it cannot serve is handed no place, and the refill ends.
     */
    private Optional<Joined> takeNext(
            long saleId, int quantity, Front reading, LongFunction<Optional<Joined>> join, Refill refill) {
        try {
            long asked = System.nanoTime();
            OptionalLong ready = take(saleId, quantity, asked);
            if (ready.isPresent()) { // the refill before this one brought a block just now
                return Optional.of(new Joined(ready.getAsLong(), reading));
            }
            long units = Math.min(
                    Math.max(size(saleId, quantity, asked), quantity + refill.waitingUnits()),
                    Math.max(quantity, MAX_UNITS));
            Optional<Joined> joined = join.apply(units);
            if (joined.isEmpty()) {
                return joined;
            }
            long from = joined.get().place();
            long next = from + quantity;
            long to = from + units;
            for (int more = 0; ; more++) {
                long extra;
                synchronized (refill) {
                    next = handOut(refill, next, to);
                    if (refill.waiters.isEmpty() || more == 2) {
                        taken(saleId, from, to, next, asked, System.nanoTime());
                        return joined;
                    }
                    // At least the first waiter's units (a purchase may ask more than a block holds): the
                    // places it could not use would all go unused.
                    int first = refill.waiters.element().quantity();
                    extra = Math.clamp(refill.waitingUnits(), first, Math.max(first, MAX_UNITS));
                }
                Optional<Joined> again = join.apply(extra);
                if (again.isEmpty()) {
                    return joined;
                }
                from = again.get().place();
                next = from;
                to = from + extra;
            }
        } finally {
            synchronized (refill) {
                refill.waiters.forEach(waiter -> waiter.place().complete(OptionalLong.empty()));
                refill.waiters.clear();
                refill.underWay = false;
            }
        }
    }

    /** Hands the places from {@code next} to {@code to} to the waiters in order, while they last: the next. */
    private static long handOut(Refill refill, long next, long to) {
        for (Waiter waiter = refill.waiters.peek();
                waiter != null && next + waiter.quantity() <= to;
                waiter = refill.waiters.peek()) {
            refill.waiters.remove();
            if (waiter.place().complete(OptionalLong.of(next))) { // not if it stopped waiting
                next += waiter.quantity();
            }
        }
        return next;
    }

    /** The place handed to a waiter, waiting at most {@link #WAIT}: empty when none came by then. */
    private static OptionalLong awaited(CompletableFuture<OptionalLong> place) {
        try {
            return place.get(WAIT.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return stopWaiting(place);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return stopWaiting(place);
        }
    }

    /** No place is handed to this waiter from now on; one handed to it just before is still its own. */
    private static OptionalLong stopWaiting(CompletableFuture<OptionalLong> place) {
        return place.cancel(false) ? OptionalLong.empty() : place.join();
    }

    /**
     * Keeps the places {@code [from, to)} of a block asked for at {@code askedNanos} and taken at {@code
     * takenNanos} as the sale's block, {@code next} the first not handed out yet (those before it went to the
     * purchase that took it and to the arrivals that waited for it). A block taken meanwhile by another
     * purchase is replaced: its places left are not handed out.
     */
    void taken(long saleId, long from, long to, long next, long askedNanos, long takenNanos) {
        blocks.put(saleId, new Block(from, to, new AtomicLong(next), askedNanos, takenNanos));
    }

    /** Forgets the sale's block: its line is no longer read here. A refill under way ends as it would. */
    void forget(long saleId) {
        blocks.remove(saleId);
        refills.remove(saleId);
    }
}
