package dev.flashsale.common.order;

import com.github.f4b6a3.uuid.UuidCreator;
import java.util.UUID;

/**
 * Order ids are UUIDv7: time-ordered, so inserts stay at the right edge of the primary-key index. Their
 * random bits come from a fast generator, not {@code SecureRandom} (whose {@code NativePRNG} takes a lock
 * every purchase shares): an order id is not a secret, since only its shopper or an admin may read the
 * order it names.
 */
public final class OrderIds {

    private OrderIds() {}

    public static UUID next() {
        return UuidCreator.getTimeOrderedEpochFast();
    }
}
