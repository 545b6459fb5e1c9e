package dev.flashsale.common.order;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/** Reads orders from Postgres; {@link OrderStore} writes them. */
@Repository
public class OrderLookup {

    private static final String SELECT = """
            select id, sale_id, user_id, quantity, status, mode, failure_code, created_at, updated_at
            from purchase_order""";

    private final JdbcClient jdbc;

    public OrderLookup(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public Optional<StoredOrder> find(UUID orderId) {
        return jdbc.sql(SELECT + " where id = :id")
                .param("id", orderId)
                .query(OrderLookup::stored)
                .optional();
    }

    /** The order a user's Idempotency-Key made for this very request (same fingerprint), if any. */
    public Optional<StoredOrder> findByKey(String userId, String idempotencyKey, String fingerprint) {
        return jdbc.sql(SELECT
                        + " where user_id = :user and idempotency_key = :key and request_fingerprint = :fingerprint")
                .param("user", userId)
                .param("key", idempotencyKey)
                .param("fingerprint", fingerprint)
                .query(OrderLookup::stored)
                .optional();
    }

    /** Whether the user holds an order of the sale other than {@code orderId}. */
    public boolean holdsAnother(String userId, long saleId, UUID orderId) {
        return jdbc.sql("select exists (select 1 from purchase_order where user_id = :user and sale_id = :sale"
                        + " and id <> :id)")
                .param("user", userId)
                .param("sale", saleId)
                .param("id", orderId)
                .query(Boolean.class)
                .single();
    }

    /** The orders Postgres holds among these, by id. */
    Map<UUID, StoredOrder> findAll(List<UUID> orderIds) {
        if (orderIds.isEmpty()) {
            return Map.of();
        }
        Map<UUID, StoredOrder> found = new HashMap<>();
        jdbc.sql(SELECT + " where id in (:ids)")
                .param("ids", orderIds)
                .query(OrderLookup::stored)
                .list()
                .forEach(order -> found.put(order.orderId(), order));
        return found;
    }

    /** An order from a row holding at least the columns of {@code purchase_order} this lookup reads. */
    public static StoredOrder stored(ResultSet rs, int row) throws SQLException {
        return new StoredOrder(
                rs.getObject("id", UUID.class),
                rs.getLong("sale_id"),
                rs.getString("user_id"),
                rs.getInt("quantity"),
                OrderStatus.valueOf(rs.getString("status")),
                PurchasePath.valueOf(rs.getString("mode")),
                rs.getTimestamp("created_at").toInstant(),
                rs.getTimestamp("updated_at").toInstant(),
                rs.getString("failure_code") == null ? "" : rs.getString("failure_code"));
    }
}
