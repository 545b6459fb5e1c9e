package dev.flashsale.worker.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.PostgresTimeouts;
import dev.flashsale.worker.WorkerIntegrationTest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * A transaction left open on a sale's stock row (BEGIN; SELECT ... FOR UPDATE, as in a forgotten psql
 * session), with the worker's own bounds (application.yml: lock_timeout 2 s): the other sale's orders in the
 * same batch are written at once, the locked sale's wait in the retry queue, and the stall shows in a metric.
 *
 * <p>The worker connects as in production, through PgBouncer in transaction mode with CloudNativePG's
 * settings ({@code scripts/services.sh up --pooler}), which drops a timeout sent at connection start: the
 * lock must still be cut at lock_timeout, not at the socket timeout (15 s). PgBouncer 1.18 (Debian's) keeps
 * no prepared statements, hence prepareThreshold=0; the migration goes direct, as production's Job does.
 */
@TestPropertySource(
        properties = {
            "app.messaging.retry-delay=200ms",
            "spring.datasource.url=jdbc:postgresql://${DB_HOST:127.0.0.1}:${POOLER_PORT:6432}/${DB_NAME:flashsale}"
                    + "?prepareThreshold=0",
            "spring.flyway.url=jdbc:postgresql://${DB_HOST:127.0.0.1}:${DB_PORT:5432}/${DB_NAME:flashsale}",
            "spring.flyway.user=${spring.datasource.username}",
            "spring.flyway.password=${spring.datasource.password}"
        })
class RowLockIntegrationTests extends WorkerIntegrationTest {

    /** One lock timeout for the batch, one for the locked sale's first order on its own, and some slack. */
    private static final Duration BOUND = Duration.ofSeconds(8);

    @Autowired
    DataSource dataSource;

    @Autowired
    MeterRegistry registry;

    private double drainTimeouts() {
        Counter counter =
                registry.find(PostgresTimeouts.METER).tag("in", "drain").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void a_row_lock_held_open_delays_only_its_own_sale_and_is_counted() throws Exception {
        int each = 5;
        long locked = shop.openSale(each, 1);
        long free = shop.openSale(each, 1);
        List<OrderRequested> orders = new ArrayList<>();
        for (int i = 0; i < each; i++) {
            orders.add(shop.reserve(locked, "locked-" + i, Instant.now()));
            orders.add(shop.reserve(free, "free-" + i, Instant.now()));
        }
        double timeoutsBefore = drainTimeouts();

        try (Connection psql = dataSource.getConnection()) {
            psql.setAutoCommit(false);
            try (PreparedStatement hold =
                    psql.prepareStatement("select remaining from sale_stock where sale_id = ? for update")) {
                hold.setLong(1, locked);
                hold.executeQuery().close();
            }
            shop.publishBatch(orders);

            await().atMost(BOUND)
                    .untilAsserted(() -> assertThat(shop.ordersByStatus(free))
                            .isEqualTo(Map.of(OrderStatus.CONFIRMED, (long) each)));
            assertThat(shop.orderCount(locked)).isZero();
            assertThat(drainTimeouts()).isGreaterThan(timeoutsBefore);
            psql.rollback();
        }

        await().atMost(BOUND).untilAsserted(() -> {
            assertThat(shop.ordersByStatus(locked)).isEqualTo(Map.of(OrderStatus.CONFIRMED, (long) each));
            // Redis's hold ends after Postgres's commit.
            for (long saleId : new long[] {locked, free}) {
                assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(each, 0, 0));
            }
        });
        for (long saleId : new long[] {locked, free}) {
            assertThat(shop.postgresStock(saleId)).isZero();
        }
    }
}
