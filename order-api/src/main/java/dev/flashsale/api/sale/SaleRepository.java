package dev.flashsale.api.sale;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
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
