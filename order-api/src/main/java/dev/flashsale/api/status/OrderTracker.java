package dev.flashsale.api.status;

import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.StockLedger;
import java.util.Optional;
import java.util.UUID;
import org.springframework.stereotype.Component;

/**
 * Finds an order wherever it is: Postgres once written, else the reservation record in Redis (a QUEUED
 * order is visible the moment its 202 is sent, before any worker has written it).
 */
@Component
public class OrderTracker {

    private final OrderStore orders;
    private final StockLedger ledger;

    OrderTracker(OrderStore orders, StockLedger ledger) {
        this.orders = orders;
        this.ledger = ledger;
    }

    public Optional<OrderView> find(UUID orderId) {
        Optional<OrderView> stored = orders.find(orderId).map(OrderTracker::view);
        if (stored.isPresent()) {
            return stored;
        }
        return ledger.saleOf(orderId)
                .flatMap(saleId -> ledger.find(saleId, orderId))
                .flatMap(OrderTracker::view);
    }

    /** The order as Redis knows it in a sale already identified; empty when no order exists. */
    public Optional<OrderView> find(long saleId, UUID orderId) {
        Optional<OrderView> stored = orders.find(orderId).map(OrderTracker::view);
        return stored.isPresent() ? stored : ledger.find(saleId, orderId).flatMap(OrderTracker::view);
    }

    private static OrderView view(StoredOrder order) {
        return new OrderView(
                order.orderId(),
                order.saleId(),
                order.quantity(),
                order.status(),
                order.mode(),
                order.createdAt(),
                order.updatedAt(),
                order.failureCode().isEmpty() ? null : order.failureCode(),
                order.userId());
    }

    private static Optional<OrderView> view(Reservation reservation) {
        OrderStatus status = reservation.state().orderStatus();
        if (status == null) {
            return Optional.empty();
        }
        return Optional.of(new OrderView(
                reservation.orderId(),
                reservation.saleId(),
                reservation.quantity(),
                status,
                reservation.mode(),
                reservation.createdAt(),
                reservation.createdAt(),
                reservation.code().isEmpty() ? null : reservation.code(),
                reservation.userId()));
    }
}
