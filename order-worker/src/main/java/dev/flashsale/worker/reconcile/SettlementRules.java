package dev.flashsale.worker.reconcile;

import dev.flashsale.common.stock.PendingReservations;
import dev.flashsale.common.stock.PendingReservations.Pending;
import dev.flashsale.common.stock.Reservation;
import java.util.Objects;
import java.util.Set;
import org.springframework.stereotype.Component;

/**
 * {@link Settlement} fed with what this worker knows besides the record: the bounds, how long it has consumed,
 * whether the queues are quiet, and whether the record's age is still the one its page read.
 */
@Component
class SettlementRules {

    private final ReconcilerProperties properties;
    private final Consuming consuming;
    private final Queues queues;
    private final PendingReservations pendings;

    SettlementRules(ReconcilerProperties properties, Consuming consuming, Queues queues, PendingReservations pendings) {
        this.properties = properties;
        this.consuming = consuming;
        this.queues = queues;
        this.pendings = pendings;
    }

    /**
     * What to do with {@code reservation}, read {@code pending.age()} old, {@code lapsed} the API instances whose
     * requests died with them.
     */
    Settlement of(Reservation reservation, Pending pending, Set<String> lapsed) {
        return Settlement.of(
                reservation.state(),
                reservation.mode(),
                pending.age(),
                consuming.duration(),
                queues.quietFor(properties.queuesQuiet()),
                lapsed.contains(reservation.instance()),
                properties);
    }

    /** What to do with a RESERVED ASYNC record that is not to be published ({@link Settlement#unpublished}). */
    Settlement unpublished(Pending pending) {
        return Settlement.unpublished(pending.age(), queues.quietFor(properties.queuesQuiet()), properties);
    }

    /**
     * Whether the record still has the score its page read: not when a worker claimed it, or another
     * reconciler published it, since (both date it anew), nor once it left the pending set. A record about to
     * be closed FAILED on an age read before that must be left to the next pass.
     */
    boolean stillAsRead(long saleId, Pending pending) {
        return Objects.equals(pendings.since(saleId, pending.orderId()), pending.since());
    }
}
