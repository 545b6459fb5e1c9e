package dev.flashsale.common.order;

import com.github.f4b6a3.uuid.UuidCreator;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * Order ids are time-ordered, so inserts stay at the right edge of the primary-key index: UUIDv7's layout (48
 * bits of Unix milliseconds first), from a fast generator, not {@code SecureRandom} (whose {@code NativePRNG}
 * takes a lock every purchase shares): an order id is not a secret, since only its shopper or an admin may
 * read the order it names.
 *
 * <p>An order of a sale whose id fits in 32 bits carries it: version 8 (RFC 9562's custom layout), the sale's
 * id in bits 30-61 of the second half, where UUIDv7 has random bits; 42 random bits remain (12 in the first
 * half, 30 in the second, which the generator counts up within a millisecond). So an order's sale is known
 * from its id alone: a status read of an order not yet in Postgres needs no index in Redis, and a purchase
 * writes no key of its own there.
 */
public final class OrderIds {

    private static final int SALE_SHIFT = 30;
    private static final long MAX_SALE = 0xFFFF_FFFFL;
    private static final long VERSION_BITS = 0xF000L;
    private static final long VERSION_8 = 0x8000L;
    /** The variant's two bits and the 30 random ones below the sale. */
    private static final long KEPT_LOW_BITS = 0xC000_0000_3FFF_FFFFL;

    private OrderIds() {}

    /** An id that names no sale (UUIDv7): for ids that are not orders'. */
    public static UUID next() {
        return UuidCreator.getTimeOrderedEpochFast();
    }

    /** A new order id of the sale: carrying it when the sale's id fits in 32 bits, else a UUIDv7. */
    public static UUID next(long saleId) {
        UUID id = next();
        if (saleId < 0 || saleId > MAX_SALE) {
            return id;
        }
        return new UUID(
                (id.getMostSignificantBits() & ~VERSION_BITS) | VERSION_8,
                (id.getLeastSignificantBits() & KEPT_LOW_BITS) | (saleId << SALE_SHIFT));
    }

    /** The sale an order id carries; empty for an id of another layout (a UUIDv7, from before or too large a sale). */
    public static OptionalLong saleOf(UUID orderId) {
        if (orderId.version() != 8 || orderId.variant() != 2) {
            return OptionalLong.empty();
        }
        return OptionalLong.of((orderId.getLeastSignificantBits() >>> SALE_SHIFT) & MAX_SALE);
    }
}
