package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Tokens;
import dev.flashsale.common.support.PrivateRedis;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A rebuild's side effects when it does not get its way: another instance holds the rebuild's lock, or a
 * transaction holds the sale's stock row. On a Redis of the test's own (port 6394), whose command
 * counters are the test's alone.
 */
class RebuildLockIntegrationTests extends ApiIntegrationTest {

    private static final PrivateRedis REDIS = PrivateRedis.start(6394);

    @Autowired
    DataSource dataSource;

    @DynamicPropertySource
    static void privateRedis(DynamicPropertyRegistry registry) {
        REDIS.register(registry);
        // Shorter than the API's 2 s query timeout, so that a rebuild waiting for a locked row can outlast it.
        registry.add("app.rebuild.lease", () -> "1s");
        registry.add("app.rebuild.freeze", () -> "0s");
        registry.add("app.rebuild.recently-sold", () -> "0s");
    }

    @AfterAll
    static void stop() throws Exception {
        REDIS.close();
    }

    /** In SYNC, a new sale of ten units, one of them bought (shopper {@code shopper} + its id): its id. */
    private long saleWithAPurchase(String shopper) {
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        long sale = api.createSale(10, 1);
        assertThat(api.purchase(sale, shopper + sale, 1).status()).isEqualTo(201);
        return sale;
    }

    /** An admin's rebuild of the sale. */
    private Api.Response rebuild(long sale) {
        return api.post("/api/v1/admin/sales/" + sale + "/rebuild", Tokens.admin(), Map.of());
    }

    @Test
    void an_instance_that_loses_the_rebuild_lock_leaves_no_hold_behind() throws Exception {
        long sale = saleWithAPurchase("lock-a-");
        try (Connection other = dataSource.getConnection()) {
            // Another instance is rebuilding the sale: it holds the rebuild's advisory lock.
            other.setAutoCommit(false);
            try (PreparedStatement lock = other.prepareStatement(
                    "select pg_try_advisory_xact_lock(hashtext('flashsale.sale-rebuild'), cast(? as integer))")) {
                lock.setLong(1, sale);
                try (ResultSet taken = lock.executeQuery()) {
                    assertThat(taken.next() && taken.getBoolean(1)).isTrue();
                }
            }
            Api.Response busy = rebuild(sale);
            assertThat(busy.status()).isEqualTo(409);
            assertThat(busy.code()).isEqualTo("REBUILD_IN_PROGRESS");

            Api.Response next = api.purchase(sale, "lock-b-" + sale, 1);
            assertThat(next.status() + " " + next.code())
                    .as("a purchase right after a rebuild that lost the lock")
                    .isEqualTo("201 ");
            other.rollback();
        }
    }

    @Test
    void the_records_are_listed_before_the_stock_row_is_locked() throws Exception {
        long sale = saleWithAPurchase("scan-");
        // The sale's line reads its buyers with an HKEYS too, once after the purchase: wait until it has.
        long[] seen = {-1};
        await().pollInterval(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(5))
                .until(() -> {
                    long now = listings();
                    boolean settled = now == seen[0];
                    seen[0] = now;
                    return settled;
                });
        long listingsBefore = seen[0];
        CompletableFuture<Api.Response> rebuilt;
        try (Connection other = lockStockRow(sale)) {
            rebuilt = CompletableFuture.supplyAsync(() -> rebuild(sale));
            await().atMost(Duration.ofSeconds(2))
                    .untilAsserted(() -> assertThat(listings())
                            .as("HKEYS while another transaction holds the stock row")
                            .isGreaterThan(listingsBefore));
            other.rollback();
        }
        Api.Response answer = rebuilt.get();
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.body().path("redisRemaining").asLong()).isEqualTo(9);
        assertThat(answer.body().path("balanced").asBoolean()).isTrue();
    }

    @Test
    void a_rebuild_that_outlasts_its_lease_writes_nothing() throws Exception {
        long sale = saleWithAPurchase("lease-a-");
        CompletableFuture<Api.Response> rebuilt;
        CompletableFuture<Api.Response> late;
        try (Connection other = lockStockRow(sale)) {
            rebuilt = CompletableFuture.supplyAsync(() -> rebuild(sale));
            Thread.sleep(1200); // past the 1 s lease: the freeze ran out, the sale sells again
            late = CompletableFuture.supplyAsync(() -> api.purchase(sale, "lease-b-" + sale, 1));
            await().atMost(Duration.ofMillis(500)).until(() -> redisRemaining(sale) == 8);
            other.rollback();
        }
        assertThat(late.get().status()).isEqualTo(201);
        Api.Response answer = rebuilt.get();
        assertThat(answer.status()).as("%s", answer.body()).isEqualTo(503);
        assertThat(answer.code()).isEqualTo("REBUILD_LAPSED");
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            Api.Response view = api.stock(sale);
            assertThat(view.body().path("redisRemaining").asLong())
                    .as("%s", view.body())
                    .isEqualTo(8);
            assertThat(view.body().path("balanced").asBoolean())
                    .as("%s", view.body())
                    .isTrue();
        });
        assertThat(redis.opsForHash().get("{sale:" + sale + "}:users", "lease-b-" + sale))
                .isEqualTo("1");
    }

    /** A transaction of another process holding the sale's stock row, until it is rolled back. */
    private Connection lockStockRow(long sale) throws Exception {
        Connection other = dataSource.getConnection();
        other.setAutoCommit(false);
        try (PreparedStatement lock =
                other.prepareStatement("select remaining from sale_stock where sale_id = ? for update")) {
            lock.setLong(1, sale);
            lock.executeQuery().close();
        }
        return other;
    }

    /** HKEYS Redis ran: a rebuild lists the sale's records with one. */
    private long listings() {
        Properties stats = redis.execute((RedisCallback<Properties>)
                connection -> connection.serverCommands().info("commandstats"));
        String listing = stats == null ? null : stats.getProperty("cmdstat_hkeys");
        if (listing == null) {
            return 0;
        }
        return Long.parseLong(listing.substring("calls=".length(), listing.indexOf(',')));
    }
}
