package dev.flashsale.api.purchase;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore.Placement;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * After a SYNC batch's commit (or the look-up of a commit whose outcome was lost): each order's answer,
 * and Redis brought in line with what Postgres holds.
 */
@Component
class SyncSettlement {

    private static final Logger log = LoggerFactory.getLogger(SyncSettlement.class);

    private final StockLedger ledger;
    private final Counter settleConflicts;

    SyncSettlement(StockLedger ledger, MeterRegistry meters) {
        this.ledger = ledger;
        this.settleConflicts = Counter.builder("flashsale.purchase.settle.conflicts")
                .description(
                        "SYNC orders confirmed in Postgres whose reservation Redis had already given back (their units are taken again)")
                .register(meters);
    }

    /** The batch's answers from what Postgres holds; the confirmed orders' holds are ended in Redis. */
    List<Written> settle(List<OrderRequested> batch, List<Placement> placements) {
        settleConfirmed(batch, placements);
        List<Written> written = new ArrayList<>(batch.size());
        for (Placement placement : placements) {
            written.add(
                    switch (placement.status()) {
                        case CONFIRMED -> new Written.Confirmed();
                        case REJECTED -> new Written.Refused(placement.failureCode());
                        // Only the reconciler records FAILED, and only for ASYNC orders: not this one.
                        case QUEUED, FAILED -> new Written.Failed();
                    });
        }
        return written;
    }

    /**
     * Ends the holds in Redis, one call per sale. A record that did not move from WRITING (or was final
     * already as CONFIRMED) means its units were given back while Postgres sold them: counted and logged,
     * never ignored. If Redis is unreachable now, the records stay WRITING and the reconciler settles
     * them from Postgres after its grace.
     */
    private void settleConfirmed(List<OrderRequested> batch, List<Placement> placements) {
        List<OrderRequested> confirmed = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            if (placements.get(i).status() == OrderStatus.CONFIRMED) {
                confirmed.add(batch.get(i));
            }
        }
        OrderRequested.bySale(confirmed, order -> order).forEach((saleId, ofSale) -> {
            List<UUID> ids = OrderRequested.ids(ofSale);
            List<Transition> settled;
            try {
                settled = ledger.advanceAll(saleId, ids, ReservationState.PENDING, ReservationState.CONFIRMED);
            } catch (RuntimeException e) {
                log.warn(
                        "{} orders of sale {} confirmed but their reservations not settled (the reconciler will): {}",
                        ids.size(),
                        saleId,
                        e.toString());
                return;
            }
            for (int i = 0; i < ids.size(); i++) {
                Transition transition = settled.get(i);
                if (!transition.changed() && transition.state() != ReservationState.CONFIRMED) {
                    settleConflicts.increment();
                    takeBack(saleId, ids.get(i), transition.state());
                }
            }
        });
    }

    /**
     * An order Postgres confirmed whose units Redis had given back: its write outlasted the reconciler's
     * grace, whose probe found nothing yet, so the reservation was released as abandoned. Redis follows
     * Postgres: the units are taken again and the record marked CONFIRMED, or Redis would sell them twice.
     */
    private void takeBack(long saleId, UUID orderId, ReservationState found) {
        Transition taken;
        try {
            taken = ledger.confirmReleased(saleId, orderId);
        } catch (RuntimeException e) {
            taken = new Transition(false, found);
        }
        if (taken.changed()) {
            log.warn(
                    "order {} of sale {} committed after its reservation was released: units taken again",
                    orderId,
                    saleId);
        } else {
            log.error(
                    "order {} of sale {} is CONFIRMED in Postgres but its reservation is {}: Redis gave its units back",
                    orderId,
                    saleId,
                    taken.state());
        }
    }
}
