package dev.flashsale.worker;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.StockLedger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Closes an order nobody could write as FAILED: records it in Postgres (which changes nothing when it was
 * written after all), then settles its reservation from what Postgres holds, since Redis follows Postgres.
 * The drain closes an order whose retries ran out, the reconciler one whose hand-off expired.
 */
public final class FailedOrders {

    private final OrderStore store;
    private final StockLedger ledger;
    private final TransactionTemplate transactions;

    public FailedOrders(OrderStore store, StockLedger ledger, TransactionTemplate transactions) {
        this.store = store;
        this.ledger = ledger;
        this.transactions = transactions;
    }

    /** The order as Postgres holds it once recorded, and whether Redis followed. */
    public sealed interface Closed {

        StoredOrder order();

        /** The reservation was settled; {@code moved} when this call moved it (not someone else before). */
        record Settled(StoredOrder order, boolean moved) implements Closed {}

        /** Postgres recorded it, Redis could not settle it: the reservation holds until the reconciler settles it. */
        record Unsettled(StoredOrder order, RuntimeException cause) implements Closed {}
    }

    /** Throws when Postgres could not record it; Redis was then not asked. */
    public Closed close(OrderRequested order, String code) {
        StoredOrder stored = Objects.requireNonNull(transactions.execute(status -> store.recordFailure(order, code)));
        try {
            return new Closed.Settled(
                    stored, ledger.settle(stored.saleId(), stored.orderId(), stored.status(), stored.failureCode()));
        } catch (RuntimeException e) {
            return new Closed.Unsettled(stored, e);
        }
    }

    /**
     * Closes several orders at once, {@code codes} one per order: all recorded in one transaction, then each
     * settled until Redis fails once (each further try could wait out the same timeout). Empty when Postgres
     * could not record them, which may well be why they failed.
     */
    public List<Closed> closeAll(List<OrderRequested> orders, List<String> codes) {
        List<StoredOrder> stored;
        try {
            stored = Objects.requireNonNull(transactions.execute(status -> {
                List<StoredOrder> recorded = new ArrayList<>(orders.size());
                for (int i = 0; i < orders.size(); i++) {
                    recorded.add(store.recordFailure(orders.get(i), codes.get(i)));
                }
                return recorded;
            }));
        } catch (RuntimeException e) {
            return List.of();
        }
        List<Closed> closed = new ArrayList<>(stored.size());
        @Nullable RuntimeException refused = null;
        for (StoredOrder order : stored) {
            if (refused == null) {
                try {
                    closed.add(new Closed.Settled(
                            order,
                            ledger.settle(order.saleId(), order.orderId(), order.status(), order.failureCode())));
                    continue;
                } catch (RuntimeException e) {
                    refused = e;
                }
            }
            closed.add(new Closed.Unsettled(order, refused));
        }
        return closed;
    }
}
