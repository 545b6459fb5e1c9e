package dev.flashsale.common.order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.support.SaleRows;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/** The order store against the real local Postgres (scripts/services.sh up), one fresh sale per test. */
class OrderStoreIntegrationTests {

    /** Names this class's sessions, so that it counts its own lock waits among other people's. */
    private static final String SESSION = "order-store-tests-" + UUID.randomUUID();

    private static DriverManagerDataSource dataSource;
    private static JdbcClient jdbc;
    private static OrderStore store;
    private static TransactionTemplate transactions;

    @BeforeAll
    static void connect() {
        String url = "jdbc:postgresql://%s:%s/%s?ApplicationName=%s"
                .formatted(env("DB_HOST", "127.0.0.1"), env("DB_PORT", "5432"), env("DB_NAME", "flashsale"), SESSION);
        dataSource = new DriverManagerDataSource(url, env("DB_USER", "flashsale"), env("DB_PASSWORD", "flashsale"));
        Flyway.configure().dataSource(dataSource).load().migrate();
        JdbcTemplate template = new JdbcTemplate(dataSource);
        jdbc = JdbcClient.create(template);
        store = new OrderStore(jdbc, new OrderLookup(jdbc));
        transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    private static String env(String name, String fallback) {
        return System.getenv().getOrDefault(name, fallback);
    }

    private static long openSale(int stock) {
        return openSale(stock, 10);
    }

    private static long openSale(int stock, int perUserLimit) {
        return SaleRows.insert(
                jdbc,
                "order-store-test-",
                "Order store test sale",
                stock,
                perUserLimit,
                Instant.now().minusSeconds(60),
                Instant.now().plusSeconds(3600));
    }

    private static OrderRequested order(long saleId, String userId) {
        return new OrderRequested(OrderIds.next(), saleId, userId, 1, Instant.now(), null, null);
    }

    private static int units(long saleId, String userId) {
        return jdbc.sql("select coalesce(sum(units), 0) from sale_user_quota where sale_id = :sale and user_id = :user")
                .param("sale", saleId)
                .param("user", userId)
                .query(Integer.class)
                .single();
    }

    private static List<OrderStatus> statuses(List<OrderRequested> orders) {
        return orders.stream()
                .map(order -> jdbc.sql("select status from purchase_order where id = :id")
                        .param("id", order.orderId())
                        .query(OrderStatus.class)
                        .single())
                .toList();
    }

    private static List<OrderStore.Placement> place(List<OrderRequested> batch) {
        return transactions.execute(status -> store.placeAll(batch, PurchasePath.SYNC));
    }

    private static long remaining(long saleId) {
        return SaleRows.remaining(jdbc, saleId);
    }

    private static int waitingOnLocks() {
        return jdbc.sql("""
                        select count(*) from pg_stat_activity
                        where application_name = :session and wait_event_type = 'Lock'""").param("session", SESSION).query(Integer.class).single();
    }

    @Test
    void two_batches_of_the_same_two_sales_in_opposite_orders_both_commit() throws Exception {
        long first = openSale(10);
        long second = openSale(10);
        List<OrderRequested> secondThenFirst = List.of(order(second, "b1"), order(first, "a1"));
        List<OrderRequested> firstThenSecond = List.of(order(first, "a2"), order(second, "b2"));

        try (Connection latch = dataSource.getConnection();
                ExecutorService pool = Executors.newFixedThreadPool(2)) {
            // The latch: the second sale's stock row is held, so each batch stops at it with whatever it
            // locked before; released, the two batches meet.
            latch.setAutoCommit(false);
            try (PreparedStatement hold =
                    latch.prepareStatement("select remaining from sale_stock where sale_id = ? for update")) {
                hold.setLong(1, second);
                hold.executeQuery().close();
            }
            Future<List<OrderStore.Placement>> secondFirst = pool.submit(
                    () -> transactions.execute(status -> store.placeAll(secondThenFirst, PurchasePath.SYNC)));
            await().atMost(Duration.ofSeconds(5)).until(() -> waitingOnLocks() == 1);
            Future<List<OrderStore.Placement>> firstFirst = pool.submit(
                    () -> transactions.execute(status -> store.placeAll(firstThenSecond, PurchasePath.SYNC)));
            await().atMost(Duration.ofSeconds(5)).until(() -> waitingOnLocks() == 2);
            latch.rollback();

            for (Future<List<OrderStore.Placement>> batch : List.of(secondFirst, firstFirst)) {
                assertThat(batch.get(10, TimeUnit.SECONDS))
                        .extracting(OrderStore.Placement::status)
                        .containsExactly(OrderStatus.CONFIRMED, OrderStatus.CONFIRMED);
            }
        }
        assertThat(remaining(first)).isEqualTo(8);
        assertThat(remaining(second)).isEqualTo(8);
    }

    @Test
    void a_batch_of_one_sale_that_fits_is_confirmed_whole_and_a_repeated_order_is_written_once() {
        long sale = openSale(10, 3);
        OrderRequested twice = order(sale, "u1");
        OrderRequested before = order(sale, "u3");
        assertThat(place(List.of(before)))
                .extracting(OrderStore.Placement::written)
                .containsExactly(true);
        List<OrderRequested> batch = List.of(twice, order(sale, "u1"), order(sale, "u2"), twice, before);

        assertThat(place(batch))
                .extracting(OrderStore.Placement::status, OrderStore.Placement::written)
                .containsExactly(
                        tuple(OrderStatus.CONFIRMED, true),
                        tuple(OrderStatus.CONFIRMED, true),
                        tuple(OrderStatus.CONFIRMED, true),
                        tuple(OrderStatus.CONFIRMED, false),
                        tuple(OrderStatus.CONFIRMED, false));
        assertThat(remaining(sale)).isEqualTo(6);
        assertThat(List.of(units(sale, "u1"), units(sale, "u2"), units(sale, "u3")))
                .containsExactly(2, 1, 1);
    }

    @Test
    void a_batch_of_one_sale_that_fits_is_placed_in_one_statement() throws Exception {
        long sale = openSale(10);
        List<OrderRequested> batch = List.of(order(sale, "u1"), order(sale, "u2"), order(sale, "u1"));
        List<String> statements = new ArrayList<>();
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            Connection counting = (Connection) Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().startsWith("prepare")) {
                            statements.add((String) args[0]);
                        }
                        try {
                            return method.invoke(connection, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            JdbcClient onIt = JdbcClient.create(new JdbcTemplate(new SingleConnectionDataSource(counting, true)));
            assertThat(new OrderStore(onIt, new OrderLookup(onIt)).placeAll(batch, PurchasePath.SYNC))
                    .extracting(OrderStore.Placement::status)
                    .containsOnly(OrderStatus.CONFIRMED);
            connection.commit();
        }
        assertThat(statements).hasSize(1);
        assertThat(remaining(sale)).isEqualTo(7);
        assertThat(units(sale, "u1")).isEqualTo(2);
    }

    @Test
    void a_batch_that_takes_a_user_past_the_limit_rejects_only_the_orders_beyond_it() {
        long sale = openSale(10, 2);
        List<OrderRequested> batch =
                List.of(order(sale, "u1"), order(sale, "u2"), order(sale, "u1"), order(sale, "u1"));

        assertThat(place(batch))
                .extracting(OrderStore.Placement::status)
                .containsExactly(
                        OrderStatus.CONFIRMED, OrderStatus.CONFIRMED, OrderStatus.CONFIRMED, OrderStatus.REJECTED);
        assertThat(statuses(batch).getLast()).isEqualTo(OrderStatus.REJECTED);
        assertThat(remaining(sale)).isEqualTo(7);
        assertThat(List.of(units(sale, "u1"), units(sale, "u2"))).containsExactly(2, 1);

        assertThat(place(List.of(order(sale, "u1"))))
                .extracting(OrderStore.Placement::failureCode)
                .containsExactly(OrderStore.LIMIT_REACHED);
        assertThat(remaining(sale)).isEqualTo(7);
        assertThat(units(sale, "u1")).isEqualTo(2);
    }

    @Test
    void a_batch_larger_than_the_stock_left_rejects_the_orders_that_do_not_fit_and_gives_their_quota_back() {
        long sale = openSale(3, 5);
        List<OrderRequested> batch =
                List.of(order(sale, "u1"), order(sale, "u2"), order(sale, "u3"), order(sale, "u4"), order(sale, "u5"));

        assertThat(place(batch))
                .extracting(OrderStore.Placement::status, OrderStore.Placement::failureCode)
                .containsExactly(
                        tuple(OrderStatus.CONFIRMED, ""),
                        tuple(OrderStatus.CONFIRMED, ""),
                        tuple(OrderStatus.CONFIRMED, ""),
                        tuple(OrderStatus.REJECTED, OrderStore.STOCK_EXHAUSTED),
                        tuple(OrderStatus.REJECTED, OrderStore.STOCK_EXHAUSTED));
        assertThat(statuses(batch))
                .containsExactly(
                        OrderStatus.CONFIRMED,
                        OrderStatus.CONFIRMED,
                        OrderStatus.CONFIRMED,
                        OrderStatus.REJECTED,
                        OrderStatus.REJECTED);
        assertThat(remaining(sale)).isZero();
        assertThat(List.of(units(sale, "u1"), units(sale, "u3"), units(sale, "u4"), units(sale, "u5")))
                .containsExactly(1, 1, 0, 0);
    }

    /**
     * The look-up after a commit whose outcome was lost, while the transaction writing the order is still
     * open (its COMMIT still on the way): it waits for that transaction, then answers what it did.
     */
    @Test
    void the_lookup_of_an_unknown_commit_waits_for_the_transaction_still_writing_it() throws Exception {
        long sale = openSale(10);
        OrderRequested committed = order(sale, "u1");
        OrderRequested rolledBack = order(sale, "u2");

        assertThat(lookUpWhileWriting(committed, true)).containsOnlyKeys(committed.orderId());
        assertThat(lookUpWhileWriting(rolledBack, false)).isEmpty();

        assertThat(remaining(sale)).isEqualTo(9);
        assertThat(jdbc.sql("select count(*) from purchase_order where sale_id = :sale")
                        .param("sale", sale)
                        .query(Integer.class)
                        .single())
                .as("the probe rows were rolled back")
                .isEqualTo(1);
    }

    /** Writes the order in a transaction left open, looks it up meanwhile, then ends the transaction. */
    private static Map<UUID, StoredOrder> lookUpWhileWriting(OrderRequested order, boolean commit) throws Exception {
        try (Connection writer = dataSource.getConnection();
                ExecutorService pool = Executors.newSingleThreadExecutor()) {
            writer.setAutoCommit(false);
            JdbcTemplate onWriter = new JdbcTemplate(new SingleConnectionDataSource(writer, true));
            JdbcClient writing = JdbcClient.create(onWriter);
            assertThat(new OrderStore(writing, new OrderLookup(writing)).placeAll(List.of(order), PurchasePath.SYNC))
                    .extracting(OrderStore.Placement::status)
                    .containsExactly(OrderStatus.CONFIRMED);
            Future<Map<UUID, StoredOrder>> lookup = pool.submit(() -> transactions.execute(status -> {
                status.setRollbackOnly();
                return store.findSettled(List.of(order));
            }));
            await().atMost(Duration.ofSeconds(5)).until(() -> waitingOnLocks() == 1);
            assertThat(lookup).as("waits while the write is open").isNotDone();
            if (commit) {
                writer.commit();
            } else {
                writer.rollback();
            }
            return lookup.get(10, TimeUnit.SECONDS);
        }
    }
}
