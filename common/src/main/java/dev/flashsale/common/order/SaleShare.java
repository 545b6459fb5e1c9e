package dev.flashsale.common.order;

import java.sql.Array;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * A sale's share of a group or worker batch (its orders of one sale) placed in one statement: the insert, the users' quotas and the sale's stock
 * in one round trip instead of three (a writable CTE), for the batch whose every order fits, which is
 * nearly every batch: Redis has already checked the stock and the per-user limit. When one does not fit,
 * {@link OrderStore} gives the statement's quota and stock moves back in the same transaction
 * ({@link #giveBack}) and takes the inserted orders one by one. Locks are taken in the order of every other batch: the orders,
 * then the quotas in user order, then the stock row.
 */
final class SaleShare {

    private static final String PLACE = """
            with batch as (
                select * from unnest(cast(:ids as uuid[]), cast(:users as varchar[]), cast(:quantities as int4[]),
                                     cast(:keys as varchar[]), cast(:fingerprints as varchar[]),
                                     cast(:created as int8[]))
                     with ordinality as b(id, user_id, quantity, idempotency_key, request_fingerprint, created_us, n)),
            placed as (
                insert into purchase_order (id, sale_id, user_id, quantity, status, mode,
                                            idempotency_key, request_fingerprint, created_at)
                select id, :sale, user_id, quantity, 'CONFIRMED', :mode, idempotency_key, request_fingerprint,
                       timestamptz 'epoch' + created_us * interval '1 microsecond'
                from batch order by n
                on conflict do nothing
                returning id, user_id, quantity),
            quota as (
                insert into sale_user_quota as quota (sale_id, user_id, units)
                select :sale, placed.user_id, sum(placed.quantity)
                from placed join unnest(cast(:sortedUsers as varchar[])) with ordinality as users(user_id, n)
                     using (user_id)
                group by placed.user_id, users.n
                having sum(placed.quantity) <= (select per_user_limit from sale where id = :sale)
                order by users.n
                on conflict (sale_id, user_id) do update set units = quota.units + excluded.units
                where quota.units + excluded.units <= (select per_user_limit from sale where sale.id = excluded.sale_id)
                returning quota.user_id),
            stock as (
                update sale_stock set remaining = remaining - taking.units, last_sold_at = now()
                from (select sum(quantity) as units, (select count(*) from quota) as fitted from placed) as taking
                -- "fitted" is always >= 0: reading it makes the quota step run (and lock) before this one
                where sale_id = :sale and remaining >= taking.units and taking.fitted >= 0
                  and slot = (select slot from sale_stock where sale_id = :sale and remaining >= taking.units
                              order by remaining desc limit 1)
                returning slot)
            select (select array_agg(id) from placed), (select array_agg(user_id) from quota),
                   (select count(distinct user_id) from placed), (select slot from stock)""";

    private final JdbcClient jdbc;
    private final UserQuotas quotas;

    SaleShare(JdbcClient jdbc, UserQuotas quotas) {
        this.jdbc = jdbc;
        this.quotas = quotas;
    }

    /**
     * What the statement did: the orders it inserted, the users whose quota it took, how many users those
     * orders have, and the stock slot it took their units from (null: the stock could not take them).
     */
    record Placed(
            Set<UUID> inserted,
            Set<String> withinLimit,
            int users,
            @Nullable Integer slot) {

        /** Whether every inserted order took its quota and stock, so all of them are CONFIRMED. */
        boolean confirmed() {
            return inserted.isEmpty() || (withinLimit.size() == users && slot != null);
        }
    }

    /** Places orders that are all of {@code saleId}; when not {@link Placed#confirmed()}, see {@link #giveBack}. */
    Placed place(long saleId, List<OrderRequested> orders, PurchasePath mode) {
        OrderColumns columns = OrderColumns.of(orders);
        // Quota rows are locked in the order UserQuotas locks them: the users sorted as Java sorts them.
        Object[] sortedUsers =
                new TreeSet<>(orders.stream().map(OrderRequested::userId).toList()).toArray();
        return jdbc.sql(PLACE)
                .param("ids", columns.ids())
                .param("users", columns.users())
                .param("quantities", columns.quantities())
                .param("keys", columns.keys())
                .param("fingerprints", columns.fingerprints())
                .param("created", columns.createdMicros())
                .param("sortedUsers", new SqlArrayValue("varchar", sortedUsers))
                .param("sale", saleId)
                .param("mode", mode.name())
                .query((rs, row) -> new Placed(
                        new HashSet<>(elements(rs.getArray(1), UUID.class)),
                        new HashSet<>(elements(rs.getArray(2), String.class)),
                        rs.getInt(3),
                        rs.getObject(4, Integer.class)))
                .single();
    }

    /**
     * Undoes the quota and stock moves of a statement that did not confirm its orders; the orders it
     * inserted ({@code inserted}, each once) stay, to be taken one by one.
     */
    void giveBack(long saleId, Placed placed, List<OrderRequested> inserted) {
        quotas.giveBack(inserted.stream()
                .filter(order -> placed.withinLimit().contains(order.userId()))
                .toList());
        if (placed.slot() != null) {
            jdbc.sql("update sale_stock set remaining = remaining + :units where sale_id = :sale and slot = :slot")
                    .param(
                            "units",
                            inserted.stream().mapToInt(OrderRequested::quantity).sum())
                    .param("sale", saleId)
                    .param("slot", placed.slot())
                    .update();
        }
    }

    private static <T> List<T> elements(@Nullable Array array, Class<T> type) throws SQLException {
        if (array == null) {
            return List.of();
        }
        Object[] values = (Object[]) array.getArray();
        return Arrays.stream(values).map(type::cast).toList();
    }
}
