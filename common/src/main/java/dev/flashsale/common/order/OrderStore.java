package dev.flashsale.common.order;

import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Writes orders to Postgres. Run inside the caller's transaction: the insert is idempotent by order id
 * (ON CONFLICT DO NOTHING, so a redelivered message or a second worker writes nothing), and stock only
 * moves through a guarded UPDATE, so Postgres can never sell more than the sale holds. {@link OrderLookup}
 * reads them.
 */
@Repository
public class OrderStore {

    /** The database could not take the units: its own stock count refused the order. */
    public static final String STOCK_EXHAUSTED = "STOCK_EXHAUSTED";

    /** The order would take the user past the sale's per-user limit, as Postgres counts it. */
    public static final String LIMIT_REACHED = "PURCHASE_LIMIT_REACHED";

    /** The user's Idempotency-Key is already bound to another order. */
    public static final String IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED";

    private final JdbcClient jdbc;
    private final OrderLookup lookup;
    private final UserQuotas quotas;
    private final SaleShare saleShare;

    public OrderStore(JdbcClient jdbc, OrderLookup lookup) {
        this.jdbc = jdbc;
        this.lookup = lookup;
        this.quotas = new UserQuotas(jdbc);
        this.saleShare = new SaleShare(jdbc, quotas);
    }

    /** The outcome of {@link #place}: the order's status in Postgres, and whether this call wrote it. */
    public record Placement(OrderStatus status, boolean written, String failureCode) {}

    /** Inserts the order and takes its units from the sale's stock; CONFIRMED, or REJECTED when stock is gone. */
    public Placement place(OrderRequested order, PurchasePath mode) {
        return placeAll(List.of(order), mode).getFirst();
    }

    /**
     * {@link #place} for a batch, in the caller's transaction (group commit). A batch of one sale is placed
     * in one statement ({@link SaleShare}) when every order fits. Otherwise: one multi-row insert, one
     * guarded upsert of the users' quotas, then one guarded stock update per sale for all the units the
     * batch newly inserted, in sale order; only when a user's quota or a sale's stock cannot take the whole
     * batch are that user's or sale's orders taken one by one, and those that do not fit become REJECTED
     * ({@link #LIMIT_REACHED}, {@link #STOCK_EXHAUSTED}). Placements come back in the order of
     * {@code orders}; an order id that appears twice is written at most once.
     */
    public List<Placement> placeAll(List<OrderRequested> orders, PurchasePath mode) {
        if (orders.isEmpty()) {
            return List.of();
        }
        long saleId = orders.getFirst().saleId();
        SaleShare.@Nullable Placed atOnce = orders.stream().allMatch(order -> order.saleId() == saleId)
                ? saleShare.place(saleId, orders, mode)
                : null;
        Set<UUID> inserted = atOnce != null ? atOnce.inserted() : insert(orders, mode);
        Set<UUID> firstSeen = new HashSet<>();
        List<OrderRequested> firstInserted = new ArrayList<>();
        for (OrderRequested order : orders) {
            if (inserted.contains(order.orderId()) && firstSeen.add(order.orderId())) {
                firstInserted.add(order);
            }
        }
        Map<UUID, Placement> placed = new HashMap<>();
        if (atOnce != null && atOnce.confirmed()) {
            firstInserted.forEach(order -> placed.put(order.orderId(), new Placement(OrderStatus.CONFIRMED, true, "")));
        } else {
            if (atOnce != null) {
                saleShare.giveBack(saleId, atOnce, firstInserted);
            }
            takeOneByOne(firstInserted, placed);
        }
        List<UUID> others = orders.stream()
                .map(OrderRequested::orderId)
                .filter(id -> !inserted.contains(id))
                .distinct()
                .toList();
        Map<UUID, StoredOrder> existing = lookup.findAll(others);
        Set<UUID> answered = new HashSet<>();
        List<Placement> placements = new ArrayList<>(orders.size());
        for (OrderRequested order : orders) {
            UUID id = order.orderId();
            Placement fresh = placed.get(id);
            if (fresh != null && answered.add(id)) {
                placements.add(fresh);
            } else if (fresh != null) {
                placements.add(new Placement(fresh.status(), false, fresh.failureCode()));
            } else {
                StoredOrder stored = existing.get(id);
                placements.add(
                        stored == null
                                ? new Placement(OrderStatus.REJECTED, false, IDEMPOTENCY_KEY_REUSED)
                                : new Placement(stored.status(), false, stored.failureCode()));
            }
        }
        return placements;
    }

    /**
     * Takes quota and stock for newly inserted orders that did not all fit at once: the users' quotas in
     * one guarded upsert, one by one for a user past the limit; then the stock per sale, in sale order.
     */
    private void takeOneByOne(List<OrderRequested> firstInserted, Map<UUID, Placement> placed) {
        List<OrderRequested> newOrders = OrderRequested.bySale(firstInserted, order -> order).values().stream()
                .flatMap(List::stream)
                .toList();
        List<OrderRequested> withinLimit = quotas.take(newOrders);
        Set<OrderRequested> within = new HashSet<>(withinLimit);
        List<UUID> refused = new ArrayList<>();
        for (OrderRequested order : newOrders) {
            if (!within.contains(order)) {
                placed.put(order.orderId(), new Placement(OrderStatus.REJECTED, true, LIMIT_REACHED));
                refused.add(order.orderId());
            }
        }
        reject(refused, LIMIT_REACHED);
        // Stock rows are locked in sale order, the same in every transaction (the worker's too), so that two
        // batches holding the same hot sales cannot deadlock.
        new TreeMap<>(OrderRequested.bySale(withinLimit, order -> order))
                .forEach((saleId, ofSale) -> takeStock(saleId, ofSale, placed));
        quotas.giveBack(withinLimit.stream()
                .filter(order -> placed.get(order.orderId()).status() != OrderStatus.CONFIRMED)
                .toList());
    }

    /** One insert for the whole batch; the ids it really inserted (the others existed, or reused a key). */
    private Set<UUID> insert(List<OrderRequested> orders, PurchasePath mode) {
        OrderColumns columns = OrderColumns.of(orders);
        List<UUID> written = jdbc.sql(INSERT_ALL)
                .param(mode.name())
                .param(columns.ids())
                .param(columns.sales())
                .param(columns.users())
                .param(columns.quantities())
                .param(columns.keys())
                .param(columns.fingerprints())
                .param(columns.createdMicros())
                .query((rs, row) -> rs.getObject(1, UUID.class))
                .list();
        return new HashSet<>(written);
    }

    private static final String INSERT_ALL = """
            insert into purchase_order (id, sale_id, user_id, quantity, status, mode,
                                        idempotency_key, request_fingerprint, created_at)
            select id, sale_id, user_id, quantity, 'CONFIRMED', ?, idempotency_key, request_fingerprint,
                   timestamptz 'epoch' + created_us * interval '1 microsecond'
            from unnest(?::uuid[], ?::int8[], ?::varchar[], ?::int4[], ?::varchar[], ?::varchar[], ?::int8[])
                 as batch(id, sale_id, user_id, quantity, idempotency_key, request_fingerprint, created_us)
            on conflict do nothing
            returning id""";

    private void reject(List<UUID> orderIds, String code) {
        if (!orderIds.isEmpty()) {
            jdbc.sql("""
                            update purchase_order set status = 'REJECTED', failure_code = :code, updated_at = now()
                            where id in (:ids)""").param("code", code).param("ids", orderIds).update();
        }
    }

    /**
     * Takes the units of a sale's newly inserted orders: all at once when one slot holds them, else one
     * by one, rejecting those that no longer fit.
     */
    private void takeStock(long saleId, List<OrderRequested> fresh, Map<UUID, Placement> placed) {
        int units = fresh.stream().mapToInt(OrderRequested::quantity).sum();
        boolean all = fresh.size() > 1 && takeStock(saleId, units);
        List<UUID> rejected = new ArrayList<>();
        for (OrderRequested order : fresh) {
            if (all || takeStock(saleId, order.quantity())) {
                placed.put(order.orderId(), new Placement(OrderStatus.CONFIRMED, true, ""));
            } else {
                placed.put(order.orderId(), new Placement(OrderStatus.REJECTED, true, STOCK_EXHAUSTED));
                rejected.add(order.orderId());
            }
        }
        reject(rejected, STOCK_EXHAUSTED);
    }

    /**
     * Records an order the worker gave up on, so its shopper sees FAILED, and returns the order as Postgres
     * then holds it: FAILED, or as it was written after all (the insert then does nothing).
     */
    public StoredOrder recordFailure(OrderRequested order, String code) {
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
        return lookup.find(order.orderId()).orElseThrow();
    }

    /** A guarded decrement of one stock slot that still holds enough units. */
    private boolean takeStock(long saleId, int quantity) {
        return jdbc.sql("""
                        update sale_stock set remaining = remaining - :quantity, last_sold_at = now()
                        where sale_id = :sale and remaining >= :quantity
                          and slot = (select slot from sale_stock
                                      where sale_id = :sale and remaining >= :quantity
                                      order by remaining desc limit 1)""").param("sale", saleId).param("quantity", quantity).update() == 1;
    }

    /**
     * The orders Postgres holds among these, by id, once every transaction still writing one of them has
     * ended: a probe insert of each waits on the unique indexes until such a transaction commits or rolls
     * back, so an order absent here was not written and cannot be by that transaction any more. For an
     * outcome that is not known (a commit whose acknowledgement was lost, a write nobody finished). Run it
     * in a transaction the caller rolls back: the probe rows must not stay.
     */
    public Map<UUID, StoredOrder> findSettled(List<OrderRequested> orders) {
        Set<UUID> absent = insert(orders, PurchasePath.SYNC);
        return lookup.findAll(orders.stream()
                .map(OrderRequested::orderId)
                .filter(id -> !absent.contains(id))
                .distinct()
                .toList());
    }
}
