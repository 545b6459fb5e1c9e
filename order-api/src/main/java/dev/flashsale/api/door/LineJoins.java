package dev.flashsale.api.door;

import dev.flashsale.common.stock.SaleLines;
import dev.flashsale.common.stock.SaleLines.Front;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * How a purchase gets a place at the back of a sale's line ({@link SaleLine}): one script call each, or a
 * place from this instance's block ({@link PlaceBlocks}), the next block taken ahead off the arrivals' path.
 */
final class LineJoins {

    /** The longest an arrival waits for a block of places another is taking, before it joins on its own. */
    private static final Duration BLOCK_WAIT = Duration.ofMillis(50);

    private final SaleLines lines;
    private final LineFronts fronts;
    private final PlaceBlocks blocks;
    private final Duration round;

    LineJoins(SaleLines lines, LineFronts fronts, PlaceBlocks blocks, Duration round) {
        this.lines = lines;
        this.fronts = fronts;
        this.blocks = blocks;
        this.round = round;
    }

    /**
     * A place at the back of the sale's line: one script call while a new place may still be served, so that
     * those places follow arrival order across instances exactly, and Redis remembers it as the shopper's (an
     * attempt whose answer died with its instance gets it back); from this instance's block of places once
     * the line reaches past its front ({@link PlaceBlocks}).
     */
    Optional<SaleLines.Joined> join(long saleId, String userId, int quantity) {
        Optional<Front> reading = fronts.known(saleId);
        if (!blocks.enabled()
                || reading.isEmpty()
                || reading.get().next() < reading.get().front()) {
            return lines.join(saleId, quantity, round, userId);
        }
        long now = System.nanoTime();
        OptionalLong place = blocks.take(saleId, quantity, now);
        if (place.isPresent()) {
            if (blocks.due(saleId, now)) {
                takeAhead(saleId, now);
            }
            return Optional.of(new SaleLines.Joined(place.getAsLong(), reading.get()));
        }
        if (!blocks.refill(saleId)) {
            // Another arrival, or a take ahead, is taking the next block: its places, or one of our own.
            if (blocks.awaitRefill(saleId, BLOCK_WAIT)) {
                place = blocks.take(saleId, quantity, System.nanoTime());
                if (place.isPresent()) {
                    return Optional.of(new SaleLines.Joined(place.getAsLong(), reading.get()));
                }
            }
            return lines.join(saleId, quantity, round, userId);
        }
        try {
            long units = blocks.size(saleId, quantity, now);
            Optional<SaleLines.Joined> joined = lines.join(saleId, Math.toIntExact(units), round, null);
            joined.ifPresent(block -> blocks.taken(saleId, block.place(), block.place() + units, quantity, now));
            return joined;
        } finally {
            blocks.refilled(saleId);
        }
    }

    /**
     * Takes the sale's next block of places on a thread of its own, so that no arrival waits for Redis while
     * it is in time; arrivals that use the block in use up first wait for it (at most 50 ms, then they join
     * one by one).
     */
    private void takeAhead(long saleId, long now) {
        if (!blocks.refill(saleId)) {
            return; // being taken already
        }
        long units = blocks.sizeAhead(saleId, now);
        Thread.startVirtualThread(() -> {
            try {
                lines.join(saleId, Math.toIntExact(units), round, null)
                        .ifPresent(
                                block -> blocks.spare(saleId, block.place(), block.place() + units, System.nanoTime()));
            } catch (RuntimeException redisDown) {
                // the next arrival to find no place takes a block itself
            } finally {
                blocks.refilled(saleId);
            }
        });
    }
}
