package dev.flashsale.api.status;

import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;

/**
 * Finds an order wherever it is known best. While its reservation is held (QUEUED) Redis has the truth and
 * Postgres may not have the order yet, so polls of queued orders cost one Redis read and no database
 * connection. A final order is read from Postgres. Each store covers for the other: while Redis is
 * unreachable, a written order still reads from Postgres; while Postgres is, Redis's record answers.
 */
@Component
public class OrderTracker {

    private static final Logger log = LoggerFactory.getLogger(OrderTracker.class);

    private final OrderLookup orders;
    private final StockLedger ledger;

    OrderTracker(OrderLookup orders, StockLedger ledger) {
        this.orders = orders;
        this.ledger = ledger;
    }

    public Optional<OrderView> find(UUID orderId) {
        return find(fromRedis(() -> ledger.saleOf(orderId)), orderId);
    }

    /** The order of a sale already identified; empty when no order exists. */
    public Optional<OrderView> find(long saleId, UUID orderId) {
        return find(Optional.of(saleId), orderId);
    }

    /** The order as Postgres holds it, whatever Redis says; throws when Postgres cannot be read. */
    public Optional<OrderView> written(UUID orderId) {
        return orders.find(orderId).map(OrderTracker::view);
    }

    /** The order a user's Idempotency-Key made for this request, from Postgres; throws when it cannot be read. */
    public Optional<OrderView> writtenUnder(String userId, String idempotencyKey, String fingerprint) {
        return orders.findByKey(userId, idempotencyKey, fingerprint).map(OrderTracker::view);
    }

    private Optional<OrderView> find(Optional<Long> saleId, UUID orderId) {
        Optional<Reservation> record = saleId.flatMap(sale -> fromRedis(() -> ledger.find(sale, orderId)));
        if (record.isPresent() && ReservationState.PENDING.contains(record.get().state())) {
            return view(record.get());
        }
        Optional<OrderView> stored;
        try {
            stored = orders.find(orderId).map(OrderTracker::view);
        } catch (DataAccessException e) {
            if (record.isEmpty()) {
                throw e;
            }
            return view(record.get());
        }
        return stored.isPresent() ? stored : record.flatMap(OrderTracker::view);
    }

    private static <T> Optional<T> fromRedis(Supplier<Optional<T>> read) {
        try {
            return read.get();
        } catch (RuntimeException e) {
            log.debug("order status read without Redis: {}", e.toString());
            return Optional.empty();
        }
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
