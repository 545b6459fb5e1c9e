package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.Optional;

/** Under AUTO, recommends the purchase mode from a model of both paths' costs; the purchase paths feed it. */
public interface AutoPilot {

    /** The path AUTO recommends now. */
    PurchasePath recommended();

    /** One purchase attempt arrived. */
    void arrived();

    /** A SYNC purchase spent this long in the database path. */
    void syncTook(long nanos);

    /** An ASYNC purchase spent this long being published, confirmed and marked PUBLISHED. */
    void asyncTook(long nanos);

    /**
     * A purchase taken by {@code path} was answered (201 or 202) this long after it arrived: the whole
     * purchase, the reservation included, which is what a shopper waits for.
     */
    void answered(PurchasePath path, long nanos);

    Optional<Switch> lastSwitch();

    /**
     * Whether AUTO is the setting. A disengaged pilot takes no decision but keeps measuring both paths (the
     * one the forced mode runs, and the other by its rehearsals); on engagement AUTO takes the model's choice
     * of that moment.
     */
    void engage(boolean engaged);

    record Switch(Instant at, PurchasePath to, String reason) {}
}
