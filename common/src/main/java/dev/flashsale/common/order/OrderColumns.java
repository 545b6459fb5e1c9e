package dev.flashsale.common.order;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * A batch of orders as one array per column of purchase_order (bound through the connection's
 * {@code createArrayOf}), so that one statement, unnesting them, serves any batch size.
 */
record OrderColumns(
        SqlArrayValue ids,
        SqlArrayValue sales,
        SqlArrayValue users,
        SqlArrayValue quantities,
        SqlArrayValue keys,
        SqlArrayValue fingerprints,
        SqlArrayValue createdMicros) {

    static OrderColumns of(List<OrderRequested> orders) {
        int size = orders.size();
        Object[] ids = new Object[size];
        Object[] sales = new Object[size];
        Object[] users = new Object[size];
        Object[] quantities = new Object[size];
        Object[] keys = new Object[size];
        Object[] fingerprints = new Object[size];
        Object[] created = new Object[size];
        for (int i = 0; i < size; i++) {
            OrderRequested order = orders.get(i);
            ids[i] = order.orderId();
            sales[i] = order.saleId();
            users[i] = order.userId();
            quantities[i] = order.quantity();
            keys[i] = order.idempotencyKey();
            fingerprints[i] = order.fingerprint();
            created[i] = ChronoUnit.MICROS.between(Instant.EPOCH, order.requestedAt());
        }
        return new OrderColumns(
                new SqlArrayValue("uuid", ids),
                new SqlArrayValue("int8", sales),
                new SqlArrayValue("varchar", users),
                new SqlArrayValue("int4", quantities),
                new SqlArrayValue("varchar", keys),
                new SqlArrayValue("varchar", fingerprints),
                new SqlArrayValue("int8", created));
    }
}
