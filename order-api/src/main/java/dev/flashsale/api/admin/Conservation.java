package dev.flashsale.api.admin;

import dev.flashsale.api.sale.Sale;
import dev.flashsale.api.sale.SaleCatalogue;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.SaleStock;
import java.util.Optional;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

/**
 * The conservation view: every unit of a sale is either still for sale, held by an accepted order not
 * yet final, or sold. {@code balanced} checks that Redis and Postgres agree on it.
 */
@Service
public class Conservation {

    private final SaleCatalogue sales;
    private final SaleStock stock;
    private final JdbcClient jdbc;

    Conservation(SaleCatalogue sales, SaleStock stock, JdbcClient jdbc) {
        this.sales = sales;
        this.stock = stock;
        this.jdbc = jdbc;
    }

    public record StockView(
            long saleId,
            long initialStock,
            long redisRemaining,
            long dbRemaining,
            long confirmed,
            long queued,
            long rejected,
            long failed,
            boolean balanced) {}

    record OrderTotals(long confirmed, long rejected, long failed, long dbRemaining) {}

    public StockView check(long id) {
        Sale sale = sales.get(id);
        OrderTotals totals = jdbc.sql("""
                        select coalesce(sum(quantity) filter (where status = 'CONFIRMED'), 0) as confirmed,
                               coalesce(sum(quantity) filter (where status = 'REJECTED'), 0) as rejected,
                               coalesce(sum(quantity) filter (where status = 'FAILED'), 0) as failed,
                               (select coalesce(sum(remaining), 0) from sale_stock where sale_id = :id) as db_remaining
                        from purchase_order where sale_id = :id""")
                .param("id", id)
                .query((rs, row) -> new OrderTotals(
                        rs.getLong("confirmed"),
                        rs.getLong("rejected"),
                        rs.getLong("failed"),
                        rs.getLong("db_remaining")))
                .single();
        Optional<SaleCounters> counters = stock.counters(id);
        long redisRemaining = counters.map(SaleCounters::remaining).orElse(0L);
        long queued = counters.map(SaleCounters::held).orElse(0L);
        long initial = sale.totalStock();
        boolean balanced = counters.isPresent()
                && totals.confirmed() <= initial
                && redisRemaining + queued + totals.confirmed() == initial
                && totals.dbRemaining() + totals.confirmed() == initial;
        return new StockView(
                id,
                initial,
                redisRemaining,
                totals.dbRemaining(),
                totals.confirmed(),
                queued,
                totals.rejected(),
                totals.failed(),
                balanced);
    }
}
