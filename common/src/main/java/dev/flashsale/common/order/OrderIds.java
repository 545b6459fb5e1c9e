package dev.flashsale.common.order;

import com.github.f4b6a3.uuid.UuidCreator;
import java.util.UUID;

/** Order ids are UUIDv7: time-ordered, so inserts stay at the right edge of the primary-key index. */
public final class OrderIds {

    private OrderIds() {}

    public static UUID next() {
        return UuidCreator.getTimeOrderedEpoch();
    }
}
