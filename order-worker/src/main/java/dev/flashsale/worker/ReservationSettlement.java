package dev.flashsale.worker;

import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import java.util.UUID;
import org.springframework.stereotype.Component;

/**
 * Brings a reservation in Redis in line with its order's final status in Postgres: a confirmed order ends
 * its hold, a rejected or failed one gives its units back. Each script moves the record only out of a
 * holding state, so settling twice, or from two workers, changes nothing the second time.
 */
@Component
public class ReservationSettlement {

    private final StockLedger ledger;

    ReservationSettlement(StockLedger ledger) {
        this.ledger = ledger;
    }

    /** Settles the reservation; true when this call moved it. */
    public boolean settle(long saleId, UUID orderId, OrderStatus status, String code) {
        return switch (status) {
            case CONFIRMED ->
                ledger.advance(saleId, orderId, ReservationState.HOLDING, ReservationState.CONFIRMED)
                        .changed();
            case REJECTED ->
                ledger.release(saleId, orderId, ReservationState.HOLDING, ReservationState.REJECTED, code)
                        .changed();
            case FAILED ->
                ledger.release(saleId, orderId, ReservationState.HOLDING, ReservationState.FAILED, code)
                        .changed();
            case QUEUED -> false;
        };
    }
}
