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

    Optional<Switch> lastSwitch();

    /**
     * Whether AUTO is the setting. A disengaged pilot keeps no state, so that AUTO always starts from
     * SYNC instead of inheriting a decision taken while ops forced a mode.
     */
    void engage(boolean engaged);

    record Switch(Instant at, PurchaseMode to, String reason) {}
}
