package dev.flashsale.common.order;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * Each user's units per sale as Postgres counts them (sale_user_quota), against the sale's per-user limit:
 * {@link OrderStore}'s second guard after the stock. Runs in the caller's transaction.
 */
final class UserQuotas {

    private static final String TAKE = """
            insert into sale_user_quota as quota (sale_id, user_id, units)
            select batch.sale_id, batch.user_id, batch.units
            from unnest(?::int8[], ?::varchar[], ?::int4[]) with ordinality as batch(sale_id, user_id, units, n)
                 join sale on sale.id = batch.sale_id
            where batch.units <= sale.per_user_limit
            order by batch.n
            on conflict (sale_id, user_id) do update set units = quota.units + excluded.units
            where quota.units + excluded.units
                  <= (select per_user_limit from sale where sale.id = excluded.sale_id)
            returning quota.sale_id, quota.user_id""";

    private final JdbcClient jdbc;

    UserQuotas(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    private record SaleUser(long saleId, String userId) implements Comparable<SaleUser> {

        static SaleUser of(OrderRequested order) {
            return new SaleUser(order.saleId(), order.userId());
        }

        @Override
        public int compareTo(SaleUser other) {
            int sales = Long.compare(saleId, other.saleId);
            return sales != 0 ? sales : userId.compareTo(other.userId);
        }
    }

    /**
     * Counts the new orders' units against each user's limit: one guarded upsert for every (sale, user) of
     * the batch; a user the batch would take past the limit has their orders counted one by one. The rows
     * are locked in (sale, user) order, the same in every transaction. Returns the orders within the limit;
     * the others took nothing.
     */
    List<OrderRequested> take(List<OrderRequested> fresh) {
        Set<SaleUser> taken = take(units(fresh));
        List<OrderRequested> within = new ArrayList<>(fresh.size());
        for (OrderRequested order : fresh) {
            SaleUser user = SaleUser.of(order);
            if (taken.contains(user) || take(Map.of(user, order.quantity())).contains(user)) {
                within.add(order);
            }
        }
        return within;
    }

    /** Adds the units to each (sale, user)'s quota where they fit the sale's limit; the pairs that fit. */
    private Set<SaleUser> take(Map<SaleUser, Integer> units) {
        Object[] sales = units.keySet().stream().map(SaleUser::saleId).toArray();
        Object[] users = units.keySet().stream().map(SaleUser::userId).toArray();
        Object[] quantities = units.values().toArray();
        List<SaleUser> fit = jdbc.sql(TAKE)
                .param(new SqlArrayValue("int8", sales))
                .param(new SqlArrayValue("varchar", users))
                .param(new SqlArrayValue("int4", quantities))
                .query((rs, row) -> new SaleUser(rs.getLong(1), rs.getString(2)))
                .list();
        return new HashSet<>(fit);
    }

    /** Gives back the quota of orders that took it but then found no stock. */
    void giveBack(List<OrderRequested> unplaced) {
        units(unplaced)
                .forEach((user, quantity) -> jdbc.sql("""
                        update sale_user_quota set units = units - :units
                        where sale_id = :sale and user_id = :user""")
                        .param("units", quantity)
                        .param("sale", user.saleId())
                        .param("user", user.userId())
                        .update());
    }

    private static Map<SaleUser, Integer> units(List<OrderRequested> orders) {
        Map<SaleUser, Integer> units = new TreeMap<>();
        orders.forEach(order -> units.merge(SaleUser.of(order), order.quantity(), Integer::sum));
        return units;
    }
}
