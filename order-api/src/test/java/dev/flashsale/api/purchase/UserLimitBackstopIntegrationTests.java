package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.WorkerProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The per-user limit holds in Postgres too: with Redis's per-user totals lost (a partial loss, a replica
 * behind), a crowd of one user's purchases in shared transactions (SYNC group commit, the worker's
 * batches) gets exactly the units left under the limit, and every other unit goes back to Redis.
 */
class UserLimitBackstopIntegrationTests extends ApiIntegrationTest {

    private static WorkerProcess worker;

    @BeforeEach
    void startWorker() throws Exception {
        if (worker == null) {
            worker = WorkerProcess.start("user-limit");
        }
    }

    @AfterAll
    static void stopWorker() throws Exception {
        if (worker != null) {
            worker.close();
        }
    }

    @Test
    void sync_purchases_past_the_limit_are_refused_by_postgres_when_redis_lost_the_users_totals() throws Exception {
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        long sale = api.createSale(500, 3);
        List<String> users = List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j").stream()
                .map(name -> "limit-" + sale + "-" + name)
                .toList();
        users.forEach(user -> assertThat(buy(sale, user, 2).status()).isEqualTo(201));
        forgetUsersTotals(sale);

        List<Api.Response> crowd = Api.concurrently(300, n -> buy(sale, users.get(n % users.size()), 1));

        assertThat(byStatus(crowd)).containsEntry(201, 10L).containsEntry(409, 290L);
        assertThat(crowd.stream().filter(response -> response.status() == 409))
                .allSatisfy(response -> assertThat(response.code()).isEqualTo("PURCHASE_LIMIT_REACHED"));
        assertExactlyTheLimit(sale, users, 3);
        assertThat(redisRemaining(sale)).as("refused units are back in Redis").isEqualTo(500 - 30);
        assertThat(api.stock(sale).body().path("balanced").asBoolean()).isTrue();
    }

    @Test
    void the_workers_batches_refuse_them_too() throws Exception {
        assertThat(api.setMode("ASYNC").status()).isEqualTo(200);
        long sale = api.createSale(500, 2);
        List<String> users = List.of("a", "b", "c", "d", "e").stream()
                .map(name -> "limit-async-" + sale + "-" + name)
                .toList();
        users.forEach(user -> assertThat(buy(sale, user, 1).status()).isEqualTo(202));
        await().atMost(Duration.ofSeconds(60)).until(() -> pgConfirmedOrders(sale) == users.size());
        forgetUsersTotals(sale);

        List<Api.Response> crowd = Api.concurrently(200, n -> buy(sale, users.get(n % users.size()), 1));

        assertThat(crowd).allSatisfy(response -> assertThat(response.status()).isEqualTo(202));
        await().atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(jdbc.sql("select count(*) from purchase_order where sale_id = :sale")
                                .param("sale", sale)
                                .query(Long.class)
                                .single())
                        .isEqualTo(205L));
        assertExactlyTheLimit(sale, users, 2);
        assertThat(jdbc.sql("""
                                select count(*) from purchase_order
                                where sale_id = :sale and status = 'REJECTED' and failure_code = 'PURCHASE_LIMIT_REACHED'""").param("sale", sale).query(Long.class).single()).isEqualTo(195L);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(redisRemaining(sale)).isEqualTo(500 - 10);
            assertThat(api.stock(sale).body().path("balanced").asBoolean()).isTrue();
        });
    }

    /**
     * Redis's per-user totals of the sale are gone and its copy of the limit is wrong (a partial loss, a
     * tampered key): Redis lets every purchase through, and only Postgres can hold the limit.
     */
    private void forgetUsersTotals(long sale) {
        assertThat(redis.delete("{sale:" + sale + "}:users")).isTrue();
        redis.opsForHash().put("{sale:" + sale + "}", "limit", "1000");
    }

    private void assertExactlyTheLimit(long sale, List<String> users, int limit) {
        Map<String, Long> units = jdbc
                .sql("""
                        select user_id, sum(quantity) as units from purchase_order
                        where sale_id = :sale and status = 'CONFIRMED' group by user_id""")
                .param("sale", sale)
                .query((rs, row) -> Map.entry(rs.getString("user_id"), rs.getLong("units")))
                .list()
                .stream()
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        assertThat(units).hasSize(users.size());
        assertThat(units.values()).allSatisfy(bought -> assertThat(bought).isEqualTo((long) limit));
        assertThat(jdbc.sql("select units from sale_user_quota where sale_id = :sale")
                        .param("sale", sale)
                        .query(Long.class)
                        .list())
                .hasSize(users.size())
                .allSatisfy(quota -> assertThat(quota).isEqualTo((long) limit));
    }

    /** A purchase; a 503 that admission control answered (nothing reserved) is retried. */
    /** Told 503, asks again as a client does, keeping its place in the sale's line (at most 50 times). */
    private Api.Response buy(long sale, String user, int quantity) {
        return api.purchaseInLine(sale, user, quantity, 50);
    }

    private static Map<Integer, Long> byStatus(List<Api.Response> responses) {
        return responses.stream().collect(Collectors.groupingBy(Api.Response::status, Collectors.counting()));
    }
}
