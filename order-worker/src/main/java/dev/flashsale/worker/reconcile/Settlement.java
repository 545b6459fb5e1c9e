package dev.flashsale.worker.reconcile;

import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import java.time.Duration;

/**
 * What the reconciler does with a pending reservation past its bound, by its state, path and age, and
 * whether a message may still finish it. An order Postgres has is always followed; each action on one it does
 * not have either finishes a hand-off its request left undone, or closes one that can no longer complete, so
 * that "absent" stays absent.
 *
 * <p>An ASYNC record says where its message should be: PUBLISHED, the broker holds it (confirmed, or a
 * confirmed retry copy) and no worker is on it; CLAIMED, a worker took it at its last delivery (the claim
 * dates the record anew); RESERVED, its request has not marked it published. Past the grace its request is
 * over, whatever became of it: the API died with it, the broker's confirm came but the PUBLISHED mark failed
 * (its shopper was told 202), or Redis could not be asked whether it ran (503 {@code OUTCOME_UNKNOWN}). No
 * answer said it does not exist, so the reconciler publishes it ({@link #PUBLISH}); a worker writes an order
 * once however many messages carry it. A record may say less than the truth in the other states too: the
 * CLAIMED to PUBLISHED mark of a retry copy can fail (it stays CLAIMED), and a claim refused by Redis leaves a
 * dead-lettered order PUBLISHED. So past the hand-off timeout a PUBLISHED or CLAIMED record is compared with
 * Postgres, and an order Postgres does not have is closed only once no queue holds a message that could
 * still write it ({@link Queues}); a CLAIMED one also only once this worker has consumed for the hand-off
 * timeout (had its worker died, its message would have gone back to the queue and been claimed again). The
 * order queue has no message TTL: however deep the backlog, an order whose message waits in it is never
 * closed.
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
     * An ASYNC order its request left RESERVED past the grace: publish it (the broker's confirm awaited), then
     * mark it PUBLISHED, so that a worker writes it. Its shopper was told 202, or that its outcome is unknown,
     * or nothing at all (the API died). A shopper who holds another order of the sale in Postgres may be a
     * replay whose fresh reservation the API could not give back: that one is left to {@link #unpublished}.
     */
    PUBLISH,
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
     * @param lapsed whether the API instance whose request holds the record has lapsed ({@link
     *     dev.flashsale.common.stock.InstanceLeases}): its request died with it, so the record is past the grace
     *     whatever its age. A record no request holds (PUBLISHED, CLAIMED) keeps its bound.
     */
    static Settlement of(
            ReservationState state,
            PurchasePath mode,
            Duration age,
            Duration consuming,
            boolean quiet,
            boolean lapsed,
            ReconcilerProperties bounds) {
        boolean request = mode == PurchasePath.SYNC || state == ReservationState.RESERVED;
        if (age.compareTo(request ? bounds.grace() : bounds.handoffTimeout()) < 0 && !(request && lapsed)) {
            return WAIT;
        }
        return switch (state) {
            case WRITING -> PROBE_THEN_RELEASE;
            case RESERVED -> mode == PurchasePath.SYNC ? RELEASE : PUBLISH;
            case PUBLISHED -> quiet ? FAIL : FOLLOW;
            case CLAIMED -> quiet && consuming.compareTo(bounds.handoffTimeout()) >= 0 ? FAIL : FOLLOW;
            // Final states are not pending: a concurrent settlement got there first.
            case CONFIRMED, REJECTED, FAILED, RELEASED, REFUSED -> WAIT;
        };
    }

    /**
     * An ASYNC reservation left RESERVED that is not to be published ({@link #PUBLISH}): closed as a PUBLISHED
     * one is, once past the hand-off timeout, when no queue holds a message that could still write it.
     */
    static Settlement unpublished(Duration age, boolean quiet, ReconcilerProperties bounds) {
        return of(ReservationState.PUBLISHED, PurchasePath.ASYNC, age, Duration.ZERO, quiet, false, bounds);
    }
}
