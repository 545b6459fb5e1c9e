package dev.flashsale.common.support;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;

/** A sale in Postgres as the tests see it: written straight in, as the API's sale creation writes it, and read back. */
public final class SaleRows {

    private SaleRows() {}

    /**
     * Inserts a sale of {@code stock} units, selling from {@code startsAt} to {@code endsAt}, under a fresh
     * SKU that starts with {@code skuPrefix}; answers its id.
     */
    public static long insert(
            JdbcClient jdbc,
            String skuPrefix,
            String name,
            int stock,
            int perUserLimit,
            Instant startsAt,
            Instant endsAt) {
        long saleId = jdbc.sql("""
                        insert into sale (sku, name, price_cents, total_stock, per_user_limit, starts_at, ends_at)
                        values (:sku, :name, 1999, :stock, :limit, :starts, :ends)
                        returning id""")
                .param("sku", skuPrefix + UUID.randomUUID())
                .param("name", name)
                .param("stock", stock)
                .param("limit", perUserLimit)
                .param("starts", Timestamp.from(startsAt))
                .param("ends", Timestamp.from(endsAt))
                .query(Long.class)
                .single();
        jdbc.sql("insert into sale_stock (sale_id, slot, remaining) values (:sale, 0, :stock)")
                .param("sale", saleId)
                .param("stock", stock)
                .update();
        return saleId;
    }

    /** The units Postgres has left for the sale, over all its stock slots. */
    public static long remaining(JdbcClient jdbc, long saleId) {
        return jdbc.sql("select sum(remaining) from sale_stock where sale_id = :sale")
                .param("sale", saleId)
                .query(Long.class)
                .single();
    }
}
