package dev.flashsale.worker.reconcile;

import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.ReservationState;
import java.time.Duration;

/**
 * What the reconciler does with a holding reservation that Postgres does not have, by its state, path and
 * age. Each action can only close a hand-off that can no longer complete, so that "absent" stays absent.
 */
enum Settlement {
    /** Younger than its bound: its request or message may still finish it. */
    WAIT,
    /**
     * A SYNC reservation never taken to WRITING: the API writes only after moving it out of RESERVED, so
     * once released here no write can follow. Nobody was told the order exists; its units go back.
     */
    RELEASE,
    /**
     * A SYNC write nobody finished (the API died, or its commit's outcome was unknown while Postgres was
     * down): wait out any transaction still writing it, then Postgres has it or it goes back.
     */
    PROBE_THEN_RELEASE,
    /**
     * An ASYNC order whose message may still be in the broker: record it FAILED in Postgres first, so that
     * a worker writing it later finds it there and changes nothing; then Redis follows Postgres.
     */
    FAIL;

    static Settlement of(ReservationState state, PurchaseMode mode, Duration age, ReconcilerProperties bounds) {
        Duration bound = mode == PurchaseMode.SYNC ? bounds.grace() : bounds.handoffTimeout();
        if (age.compareTo(bound) < 0) {
            return WAIT;
        }
        return switch (state) {
            case WRITING -> PROBE_THEN_RELEASE;
            case RESERVED -> mode == PurchaseMode.SYNC ? RELEASE : FAIL;
            case PUBLISHED, CLAIMED -> FAIL;
            // Final states are not holding: a concurrent settlement got there first.
            case CONFIRMED, REJECTED, FAILED, RELEASED, REFUSED -> WAIT;
        };
    }
}
