package dev.flashsale.api.sale;

import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.StoredOrder;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

@Repository
class SaleRepository {

    private final JdbcClient jdbc;

    SaleRepository(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** Inserts the sale and its stock (one slot); returns the new id. */
    long insert(NewSale sale) {
        long id = jdbc.sql("""
                        insert into sale (sku, name, price_cents, total_stock, per_user_limit, starts_at, ends_at)
                        values (:sku, :name, :price, :stock, :limit, :starts, :ends)
                        returning id""")
                .param("sku", sale.sku())
                .param("name", sale.name())
                .param("price", sale.priceCents())
                .param("stock", sale.stock())
                .param("limit", sale.perUserLimit())
                .param("starts", Timestamp.from(sale.startsAt()))
                .param("ends", Timestamp.from(sale.endsAt()))
                .query(Long.class)
                .single();
        jdbc.sql("insert into sale_stock (sale_id, slot, remaining) values (:id, 0, :stock)")
                .param("id", id)
                .param("stock", sale.stock())
                .update();
        return id;
    }

    Optional<Sale> find(long id) {
        return jdbc.sql("""
                        select id, sku, name, price_cents, total_stock, per_user_limit, starts_at, ends_at, created_at
                        from sale where id = :id""").param("id", id).query(SaleRepository::sale).optional();
    }

    /** The newest sales first. */
    List<Sale> recent(int limit) {
        return jdbc.sql("""
                        select id, sku, name, price_cents, total_stock, per_user_limit, starts_at, ends_at, created_at
                        from sale order by id desc limit :limit""").param("limit", limit).query(SaleRepository::sale).list();
    }

    /** The rebuild's lock, for the rest of the transaction: false when another instance is rebuilding the sale. */
    boolean lockForRebuild(long id) {
        return Boolean.TRUE.equals(
                jdbc.sql("select pg_try_advisory_xact_lock(hashtext('flashsale.sale-rebuild'), cast(:id as integer))")
                        .param("id", id)
                        .query(Boolean.class)
                        .single());
    }

    /** Locks the sale's stock rows for the rest of the transaction: no order commits until the rebuild wrote Redis. */
    void lockStock(long id) {
        jdbc.sql("select remaining from sale_stock where sale_id = :id for update")
                .param("id", id)
                .query(Integer.class)
                .list();
    }

    /** Every order of a sale, what its confirmed orders hold, and those placed with an Idempotency-Key. */
    record Ledger(List<StoredOrder> orders, List<SaleRebuilt.KeyedOrder> keyed, long confirmedUnits) {}

    Ledger ledgerOf(long id) {
        List<StoredOrder> orders = new ArrayList<>();
        List<SaleRebuilt.KeyedOrder> keyed = new ArrayList<>();
        jdbc.sql("""
                        select id, sale_id, user_id, quantity, status, mode, failure_code, created_at, updated_at,
                               idempotency_key, request_fingerprint
                        from purchase_order where sale_id = :id""").param("id", id).query(rs -> {
            StoredOrder order = OrderLookup.stored(rs, orders.size());
            orders.add(order);
            String key = rs.getString("idempotency_key");
            if (key != null) {
                keyed.add(new SaleRebuilt.KeyedOrder(
                        order.orderId(), order.userId(), key, rs.getString("request_fingerprint"), order.createdAt()));
            }
        });
        long confirmed = orders.stream()
                .filter(order -> order.status() == OrderStatus.CONFIRMED)
                .mapToLong(StoredOrder::quantity)
                .sum();
        return new Ledger(orders, keyed, confirmed);
    }

    /** A sale open now: its remaining stock in Postgres, and whether it took an order lately. */
    record OpenSale(long id, long remaining, boolean recentlySold) {}

    /** Every sale open at {@code now}; recentlySold when it sold a unit after {@code recentSince}. */
    List<OpenSale> open(Instant now, Instant recentSince) {
        return jdbc.sql("""
                        select sale.id, coalesce(sum(sale_stock.remaining), 0) as remaining,
                               coalesce(max(sale_stock.last_sold_at) > :recent, false) as recently_sold
                        from sale join sale_stock on sale_stock.sale_id = sale.id
                        where sale.starts_at <= :now and sale.ends_at > :now
                        group by sale.id""")
                .param("now", Timestamp.from(now))
                .param("recent", Timestamp.from(recentSince))
                .query((rs, row) ->
                        new OpenSale(rs.getLong("id"), rs.getLong("remaining"), rs.getBoolean("recently_sold")))
                .list();
    }

    private static Sale sale(ResultSet rs, int row) throws SQLException {
        return new Sale(
                rs.getLong("id"),
                rs.getString("sku"),
                rs.getString("name"),
                rs.getLong("price_cents"),
                rs.getInt("total_stock"),
                rs.getInt("per_user_limit"),
                rs.getTimestamp("starts_at").toInstant(),
                rs.getTimestamp("ends_at").toInstant(),
                rs.getTimestamp("created_at").toInstant());
    }
}
