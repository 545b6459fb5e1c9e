package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchaseMode;
import java.time.Instant;
import java.util.Optional;

/** Under AUTO, recommends the purchase mode from measured load; the purchase paths feed it. */
public interface AutoPilot {

    /** The path AUTO recommends now. */
    PurchaseMode recommended();

    /** The path of the next purchase under AUTO: the recommended one, now and then the other, to measure it. */
    PurchaseMode route();

    /** One purchase attempt arrived. */
    void arrived();

    /** A SYNC purchase spent this long in the database path. */
    void syncTook(long nanos);

    /** An ASYNC purchase spent this long being published, confirmed and handed over. */
    void asyncTook(long nanos);

    /**
     * A purchase taken by {@code path} was answered (201 or 202) this long after it arrived: the whole
     * purchase, the reservation included, which is what a shopper waits for.
     */
    void answered(PurchaseMode path, long nanos);

    Optional<Switch> lastSwitch();

    /**
     * Whether AUTO is the setting. A disengaged pilot takes no decision but keeps measuring whichever path
     * the forced mode runs; on engagement AUTO starts from what it measured of both paths lately (ASYNC
     * when SYNC was the slower by the switch ratio, else SYNC), not from a decision taken before.
     */
    void engage(boolean engaged);

    record Switch(Instant at, PurchaseMode to, String reason) {}
}
