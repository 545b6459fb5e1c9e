package dev.flashsale.common.order;

import java.sql.Timestamp;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Writes orders to Postgres. Run inside the caller's transaction: the insert is idempotent by order id
 * (ON CONFLICT DO NOTHING, so a redelivered message or a second worker writes nothing), and stock only
 * moves through a guarded UPDATE, so Postgres can never sell more than the sale holds.
 */
@Repository
public class OrderStore {

    /** The database could not take the units: its own stock count refused the order. */
    public static final String STOCK_EXHAUSTED = "STOCK_EXHAUSTED";

    /** The user's Idempotency-Key is already bound to another order. */
    public static final String IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED";

    private final JdbcClient jdbc;

    public OrderStore(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** The outcome of {@link #place}: the order's status in Postgres, and whether this call wrote it. */
    public record Placement(OrderStatus status, boolean written, String failureCode) {}

    /** Inserts the order and takes its units from the sale's stock; CONFIRMED, or REJECTED when stock is gone. */
    public Placement place(OrderRequested order, PurchaseMode mode) {
        int inserted = jdbc.sql("""
                        insert into purchase_order (id, sale_id, user_id, quantity, status, mode,
                                                    idempotency_key, request_fingerprint, created_at)
                        values (:id, :sale, :user, :quantity, 'CONFIRMED', :mode, :key, :fingerprint, :created)
                        on conflict do nothing""")
                .param("id", order.orderId())
                .param("sale", order.saleId())
                .param("user", order.userId())
                .param("quantity", order.quantity())
                .param("mode", mode.name())
                .param("key", order.idempotencyKey())
                .param("fingerprint", order.fingerprint())
                .param("created", Timestamp.from(order.requestedAt()))
                .update();
        if (inserted == 0) {
            return find(order.orderId())
                    .map(existing -> new Placement(existing.status(), false, existing.failureCode()))
                    .orElseGet(() -> new Placement(OrderStatus.REJECTED, false, IDEMPOTENCY_KEY_REUSED));
        }
        if (takeStock(order.saleId(), order.quantity())) {
            return new Placement(OrderStatus.CONFIRMED, true, "");
        }
        jdbc.sql("""
                        update purchase_order set status = 'REJECTED', failure_code = :code, updated_at = now()
                        where id = :id""")
                .param("code", STOCK_EXHAUSTED)
                .param("id", order.orderId())
                .update();
        return new Placement(OrderStatus.REJECTED, true, STOCK_EXHAUSTED);
    }

    /**
     * Records an order the worker gave up on, so its shopper sees FAILED. Does nothing when the order was
     * written after all.
     */
    public void recordFailure(OrderRequested order, String code) {
        jdbc.sql("""
                        insert into purchase_order (id, sale_id, user_id, quantity, status, mode,
                                                    idempotency_key, request_fingerprint, failure_code, created_at)
                        values (:id, :sale, :user, :quantity, 'FAILED', 'ASYNC', :key, :fingerprint, :code, :created)
                        on conflict do nothing""")
                .param("id", order.orderId())
                .param("sale", order.saleId())
                .param("user", order.userId())
                .param("quantity", order.quantity())
                .param("key", order.idempotencyKey())
                .param("fingerprint", order.fingerprint())
                .param("code", code)
                .param("created", Timestamp.from(order.requestedAt()))
                .update();
    }

    /** A guarded decrement of one stock slot that still holds enough units. */
    private boolean takeStock(long saleId, int quantity) {
        return jdbc.sql("""
                        update sale_stock set remaining = remaining - :quantity
                        where sale_id = :sale and remaining >= :quantity
                          and slot = (select slot from sale_stock
                                      where sale_id = :sale and remaining >= :quantity
                                      order by remaining desc limit 1)""").param("sale", saleId).param("quantity", quantity).update() == 1;
    }

    public Optional<StoredOrder> find(UUID orderId) {
        return jdbc.sql("""
                        select id, sale_id, user_id, quantity, status, mode, failure_code, created_at, updated_at
                        from purchase_order where id = :id""")
                .param("id", orderId)
                .query((rs, row) -> new StoredOrder(
                        rs.getObject("id", UUID.class),
                        rs.getLong("sale_id"),
                        rs.getString("user_id"),
                        rs.getInt("quantity"),
                        OrderStatus.valueOf(rs.getString("status")),
                        PurchaseMode.valueOf(rs.getString("mode")),
                        rs.getTimestamp("created_at").toInstant(),
                        rs.getTimestamp("updated_at").toInstant(),
                        rs.getString("failure_code") == null ? "" : rs.getString("failure_code")))
                .optional();
    }
}
