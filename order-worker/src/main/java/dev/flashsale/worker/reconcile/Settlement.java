package dev.flashsale.worker.reconcile;

import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.ReservationState;
import java.time.Duration;

/**
 * What the reconciler does with a holding reservation that Postgres does not have, by its state, path and
 * age. Each action can only close a hand-off that can no longer complete, so that "absent" stays absent.
 *
 * <p>An ASYNC record says where its message is: PUBLISHED, the broker holds it (confirmed, or a confirmed
 * retry copy) and no worker is on it; CLAIMED, a worker took it at its last delivery (the claim dates the
 * record anew). The order queue has no message TTL, so a PUBLISHED order is never closed by age, however
 * deep the backlog ahead of it. A CLAIMED one past the hand-off timeout since its last claim, judged by a
 * worker that has itself consumed for that long, was dead-lettered (retries exhausted while Postgres was down,
 * the delivery limit): had its worker died, its message would have gone back to the queue and been claimed
 * again. A RESERVED one past it was never confirmed by the broker.
 */
enum Settlement {
    /** Younger than its bound, or its message is with the broker: its request or message may still finish it. */
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
     * An ASYNC order never confirmed by the broker, or claimed and not finished within the hand-off
     * timeout: record it FAILED in Postgres first, so that a worker writing it later finds it there and
     * changes nothing; then Redis follows Postgres.
     */
    FAIL;

    /**
     * @param consuming how long this worker has consumed the queues without a break: a CLAIMED record is
     *     closed only once that is a hand-off timeout too, so that a message its dead worker returned to the
     *     queue has been claimed again (and so dated anew) by then
     */
    static Settlement of(
            ReservationState state, PurchaseMode mode, Duration age, Duration consuming, ReconcilerProperties bounds) {
        if (state == ReservationState.PUBLISHED) {
            return WAIT;
        }
        Duration bound = mode == PurchaseMode.SYNC ? bounds.grace() : bounds.handoffTimeout();
        if (age.compareTo(bound) < 0) {
            return WAIT;
        }
        return switch (state) {
            case WRITING -> PROBE_THEN_RELEASE;
            case RESERVED -> mode == PurchaseMode.SYNC ? RELEASE : FAIL;
            case CLAIMED -> consuming.compareTo(bounds.handoffTimeout()) < 0 ? WAIT : FAIL;
            // Final states are not holding: a concurrent settlement got there first.
            case PUBLISHED, CONFIRMED, REJECTED, FAILED, RELEASED, REFUSED -> WAIT;
        };
    }
}
