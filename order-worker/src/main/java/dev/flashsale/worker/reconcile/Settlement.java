package dev.flashsale.worker.reconcile;

import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import java.time.Duration;

/**
 * What the reconciler does with a pending reservation past its bound, by its state, path and age, and
 * whether a message may still finish it. An order Postgres has is always followed; each action on one it does
 * not have can only close a hand-off that can no longer complete, so that "absent" stays absent.
 *
 * <p>An ASYNC record says where its message should be: PUBLISHED, the broker holds it (confirmed, or a
 * confirmed retry copy) and no worker is on it; CLAIMED, a worker took it at its last delivery (the claim
 * dates the record anew); RESERVED, not confirmed yet. A record may say less than the truth: the PUBLISHED
 * mark after a confirm can fail (the record stays RESERVED), so can the CLAIMED to PUBLISHED mark of a retry
 * copy (it stays CLAIMED), and a claim refused by Redis leaves a dead-lettered order PUBLISHED. So past the
 * hand-off timeout an ASYNC record is compared with Postgres, and an order Postgres does not have is closed
 * only once no queue holds a message that could still write it ({@link Queues}); a CLAIMED one also only once
 * this worker has consumed for the hand-off timeout (had its worker died, its message would have gone back
 * to the queue and been claimed again). The order queue has no message TTL: however deep the backlog, an
 * order whose message waits in it is never closed.
 */
enum Settlement {
    /** Younger than its bound: its request or message may still finish it. */
    WAIT,
    /**
     * Past its bound, but a message may still finish it: follow Postgres if it has the order (the worker
     * wrote or failed it and Redis missed the news), otherwise wait.
     */
    FOLLOW,
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
     * An ASYNC order past the hand-off timeout that Postgres does not have and no message can write any
     * more: record it FAILED in Postgres first, so that a worker writing it later finds it there and changes
     * nothing; then Redis follows Postgres, and its units come back.
     */
    FAIL;

    /**
     * @param consuming how long this worker has consumed the queues without a break: a CLAIMED record is
     *     closed only once that is a hand-off timeout too, so that a message its dead worker returned to the
     *     queue has been claimed again (and so dated anew) by then
     * @param quiet whether the order and retry queues have stood empty for {@code queues-quiet} ({@link
     *     Queues#quietFor}): no message can still write the order
     */
    static Settlement of(
            ReservationState state,
            PurchasePath mode,
            Duration age,
            Duration consuming,
            boolean quiet,
            ReconcilerProperties bounds) {
        Duration bound = mode == PurchasePath.SYNC ? bounds.grace() : bounds.handoffTimeout();
        if (age.compareTo(bound) < 0) {
            return WAIT;
        }
        return switch (state) {
            case WRITING -> PROBE_THEN_RELEASE;
            case RESERVED -> mode == PurchasePath.SYNC ? RELEASE : quiet ? FAIL : FOLLOW;
            case PUBLISHED -> quiet ? FAIL : FOLLOW;
            case CLAIMED -> quiet && consuming.compareTo(bounds.handoffTimeout()) >= 0 ? FAIL : FOLLOW;
            // Final states are not pending: a concurrent settlement got there first.
            case CONFIRMED, REJECTED, FAILED, RELEASED, REFUSED -> WAIT;
        };
    }
}
