package dev.flashsale.api.warmup;

import dev.flashsale.api.mode.PathRehearsal;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleStock;
import dev.flashsale.common.stock.StockLedger;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The purchase path's back half, rehearsed on a throw-away sale that no shopper can reach (an id from
 * the top of the range, which the identity sequence never hands out, and never committed to Postgres):
 * the stock scripts in Redis, the group-commit insert in Postgres and the publish with its confirm; and a
 * sale's line, through requests ({@link #openLine}). Each leaves nothing behind: the Redis keys are deleted,
 * the transaction is rolled back, the message is unroutable. The warm-up runs them before readiness; AUTO
 * runs the two paths' halves as its idle probes ({@link PathRehearsal}), on a sale id of their own.
 */
@Component
class Rehearsals implements PathRehearsal {

    /** Orders per rehearsed batch, as a group commit under a little load would carry. */
    static final int BATCH = 10;

    /** Units of the throw-away sale whose line the warm-up's crowd joins: its first places are served. */
    static final int LINE_UNITS = 16;

    private final StockLedger ledger;
    private final SaleStock stock;
    private final OrderStore orders;
    private final TransactionTemplate transactions;
    private final JdbcClient jdbc;
    private final BrokerRehearsal broker;
    private final Clock clock;
    /** 32 below its draw: should the warm-up draw the same base, its ids (the base and a few below) stay apart. */
    private final long probeSaleId = throwAwaySaleId() - 32;

    private final String probeShoppers = shopperPrefix("probe");

    Rehearsals(
            StockLedger ledger,
            SaleStock stock,
            OrderStore orders,
            TransactionTemplate transactions,
            JdbcClient jdbc,
            BrokerRehearsal broker,
            Clock clock) {
        this.ledger = ledger;
        this.stock = stock;
        this.orders = orders;
        this.transactions = transactions;
        this.jdbc = jdbc;
        this.broker = broker;
        this.clock = clock;
    }

    /**
     * A sale id from the top of the range, a multiple of 64 below it: the identity sequence never gets
     * there, so no real sale is touched, and each caller's draw leaves it 64 ids of its own.
     */
    static long throwAwaySaleId() {
        return Long.MAX_VALUE - 64L * ThreadLocalRandom.current().nextInt(1 << 30);
    }

    /** Made-up shoppers' ids start with this: the tag and a random part, so that no two runs share one. */
    static String shopperPrefix(String tag) {
        return tag + "-"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + "-";
    }

    @Override
    public boolean sync() {
        return database(probeSaleId, probeShoppers);
    }

    @Override
    public boolean async() throws InterruptedException {
        return broker(probeSaleId, probeShoppers);
    }

    /**
     * One round of what the SYNC and ASYNC paths do in Redis, on a throw-away sale of its own: load it,
     * reserve a batch, mark it published (RESERVED → PUBLISHED), settle (→ CONFIRMED) and release one; then
     * every key of the sale is deleted. Script calls made.
     */
    int ledger(long saleId, String shopperPrefix) {
        Instant now = clock.instant();
        List<UUID> batch = new ArrayList<>(BATCH);
        try {
            stock.loadSale(saleId, 1_000_000, 1_000, now.minus(Duration.ofHours(1)), now.plus(Duration.ofHours(1)));
            for (int i = 0; i < BATCH; i++) {
                UUID orderId = OrderIds.next();
                batch.add(orderId);
                PurchasePath mode = i % 2 == 0 ? PurchasePath.SYNC : PurchasePath.ASYNC;
                ledger.reserve(saleId, orderId, shopperPrefix + i, 1, mode, clock.instant(), i % 3 == 0);
            }
            ledger.markPublished(saleId, batch);
            ledger.settleConfirmed(saleId, batch.subList(1, batch.size()));
            ledger.release(saleId, batch.getFirst(), ReservationState.PENDING, ReservationState.RELEASED, "WARMUP");
            ledger.find(saleId, batch.getFirst());
            stock.counters(saleId);
        } finally {
            stock.discard(saleId, batch);
        }
        return 1 + BATCH + 5;
    }

    /**
     * Opens a throw-away sale in Redis only, of {@link #LINE_UNITS} units and one a shopper, for a crowd to join
     * its line ({@link SelfRequests#inLine}): the line code meets its first real crowd warm. Postgres does not
     * know the sale, so a served place is answered 404 and nothing is ever reserved.
     */
    void openLine(long saleId) {
        Instant now = clock.instant();
        stock.loadSale(saleId, LINE_UNITS, 1, now.minus(Duration.ofHours(1)), now.plus(Duration.ofHours(1)));
    }

    /** Deletes every key of the sale {@link #openLine} opened: its state, its line and the places by shopper. */
    void closeLine(long saleId) {
        stock.discard(saleId, List.of());
    }

    /**
     * The SYNC path's batch insert and guarded stock update, in a transaction that is always rolled back,
     * against a sale row written (without its sequence) inside that same transaction. True when the
     * batch was placed as confirmed, which the rollback then undoes.
     */
    boolean database(long saleId, String shopperPrefix) {
        Boolean placed = transactions.execute(status -> {
            status.setRollbackOnly();
            Instant now = clock.instant();
            // One statement (one round trip) for the throw-away sale and its stock row, so that the rehearsal
            // costs about what a real batch does: AUTO's idle probes time it.
            jdbc.sql("""
                            with sale_row as (
                              insert into sale (id, sku, name, price_cents, total_stock, per_user_limit, starts_at, ends_at)
                              overriding system value
                              values (:id, :sku, 'warm-up', 0, :stock, 1000, :starts, :ends)
                              returning id)
                            insert into sale_stock (sale_id, slot, remaining) select id, 0, :stock from sale_row""")
                    .param("id", saleId)
                    .param("sku", "warmup-" + UUID.randomUUID())
                    .param("stock", 1_000)
                    .param("starts", Timestamp.from(now.minus(Duration.ofHours(1))))
                    .param("ends", Timestamp.from(now.plus(Duration.ofHours(1))))
                    .update();
            return orders.placeAll(batch(saleId, shopperPrefix), PurchasePath.SYNC).stream()
                    .allMatch(placement -> placement.status() == OrderStatus.CONFIRMED);
        });
        return Boolean.TRUE.equals(placed);
    }

    /** One batch message, published as the ASYNC path does ({@link BrokerRehearsal}). True when confirmed. */
    boolean broker(long saleId, String shopperPrefix) throws InterruptedException {
        return broker.publish(batch(saleId, shopperPrefix));
    }

    private List<OrderRequested> batch(long saleId, String shopperPrefix) {
        Instant now = clock.instant();
        List<OrderRequested> batch = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            batch.add(new OrderRequested(OrderIds.next(), saleId, shopperPrefix + i, 1, now, null, null));
        }
        return batch;
    }
}
