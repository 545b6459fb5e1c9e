package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Tokens;
import dev.flashsale.api.support.WorkerProcess;
import dev.flashsale.common.support.PrivateRedis;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Redis killed, wiped or restarted behind Postgres in the middle of a crowd, on a Redis of the test's own
 * (port 6391): the sale comes back by itself, rebuilt from Postgres, and sells exactly its stock. Shoppers
 * retry a 503 with the same Idempotency-Key, as a storefront does, and each one's last answer is the
 * truth: a shopper told 503 never ends with an order a replay of the key refuses.
 */
class RedisLossIntegrationTests extends ApiIntegrationTest {

    private static final PrivateRedis REDIS = PrivateRedis.start(6391);
    private static WorkerProcess worker;

    @DynamicPropertySource
    static void privateRedis(DynamicPropertyRegistry registry) {
        rebuildFrom(REDIS, registry);
    }

    /** Started once the API has migrated the schema (the worker waits for it). */
    @BeforeEach
    void startWorker() throws Exception {
        if (worker == null) {
            worker = WorkerProcess.start("redis-loss", Map.of("REDIS_PORT", Integer.toString(REDIS.port())));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (worker != null) {
            worker.close();
        }
        REDIS.close();
    }

    /** A shopper's last answer, after retrying 503s with the same key. */
    record Answer(String user, String key, int status, String code, String orderId) {}

    @Test
    void a_sync_sale_whose_redis_is_killed_and_wiped_mid_crowd_comes_back_and_sells_exactly_its_stock()
            throws Exception {
        crowdThroughLoss("SYNC");
    }

    @Test
    void an_async_sale_whose_redis_is_killed_and_wiped_mid_crowd_leaves_no_ghost_and_sells_exactly_its_stock()
            throws Exception {
        crowdThroughLoss("ASYNC");
    }

    @Test
    void a_sale_whose_postgres_books_disagree_is_rebuilt_once_not_every_interval() throws Exception {
        long sale = api.createSale(10, 1);
        // Postgres's stock row says 0 where its orders (none) leave 10: Redis's 10 stays above it whatever a
        // rebuild does. Before the watch remembered that, it rebuilt the sale (a keyspace scan) every 300 ms.
        setPostgresRemaining(sale, 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> rebuiltAt(sale) != null);
        Object first = rebuiltAt(sale);
        Thread.sleep(2_000); // more than six watch intervals
        assertThat(rebuiltAt(sale)).as("rebuilt again with nothing changed").isEqualTo(first);
        assertThat(redisRemaining(sale)).isEqualTo(10);

        // Either figure moving is news: the sale is rebuilt again.
        setPostgresRemaining(sale, 5);
        await().atMost(Duration.ofSeconds(10)).until(() -> !first.equals(rebuiltAt(sale)));
        setPostgresRemaining(sale, 10);
    }

    private void setPostgresRemaining(long sale, int remaining) {
        jdbc.sql("update sale_stock set remaining = :remaining where sale_id = :sale")
                .param("remaining", remaining)
                .param("sale", sale)
                .update();
    }

    private Object rebuiltAt(long sale) {
        return redis.opsForHash().get("{sale:" + sale + "}", "rebuiltAt");
    }

    private void crowdThroughLoss(String mode) throws Exception {
        int stock = 60;
        int shoppers = 300;
        assertThat(api.setMode(mode).status()).isEqualTo(200);
        long sale = api.createSale(stock, 1);
        AtomicInteger accepted = new AtomicInteger();
        Thread killer = Thread.ofVirtual().start(() -> {
            await().atMost(Duration.ofSeconds(60)).until(() -> accepted.get() >= stock / 4);
            try {
                REDIS.kill();
                REDIS.wipe();
                REDIS.restart();
                // The mode flag lived in the lost Redis too: the operator sets it again.
                api.setMode(mode);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        List<Answer> answers =
                Api.concurrently(shoppers, n -> shop(sale, "loss-" + mode + "-" + sale + "-" + n, accepted));
        killer.join();

        Map<Integer, Long> byStatus =
                answers.stream().collect(Collectors.groupingBy(Answer::status, Collectors.counting()));
        assertThat(answers)
                .as("last answers %s", byStatus)
                .allSatisfy(answer ->
                        assertThat(answer.status() + " " + answer.code()).isIn("201 ", "202 ", "409 SOLD_OUT"));
        await().atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> assertThat(queuedOrNotFinal(sale, answers)).isZero());
        // A storefront reads the sale: it never reads ENDED, and the read alone brings it back.
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> assertThat(api.get("/api/v1/sales/" + sale, null).text("state"))
                                .isEqualTo("SOLD_OUT"));
        assertThat(confirmedUnits(sale)).as("units confirmed in Postgres").isEqualTo(stock);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Api.Response view = api.stock(sale);
            assertThat(view.body().path("balanced").asBoolean())
                    .as("%s", view.body())
                    .isTrue();
            assertThat(view.body().path("redisRemaining").asLong()).isZero();
            assertThat(view.body().path("queued").asLong()).isZero();
        });
        assertThat(redisRemaining(sale)).isZero();
        // No ghost: every order Postgres holds is the one its shopper's last answer named.
        Map<String, Answer> byKey = answers.stream().collect(Collectors.toMap(Answer::key, answer -> answer));
        List<Map<String, Object>> orders =
                jdbc.sql("""
                        select id, idempotency_key, status from purchase_order where sale_id = :sale""").param("sale", sale).query().listOfRows();
        assertThat(orders).allSatisfy(order -> {
            Answer answer = byKey.get((String) order.get("idempotency_key"));
            assertThat(answer.orderId())
                    .as("order %s (%s) of the shopper answered %s", order.get("id"), order.get("status"), answer)
                    .isEqualTo(order.get("id").toString());
        });
        long acceptedAnswers = answers.stream()
                .filter(a -> a.status() == 201 || a.status() == 202)
                .count();
        assertThat(acceptedAnswers).as("accepted answers").isEqualTo(orders.size());
        if (mode.equals("SYNC")) {
            assertThat(acceptedAnswers).isEqualTo(stock);
        }
    }

    /** One shopper: retries a 503, or a connection the busy box did not open in time, with the same key. */
    private Answer shop(long sale, String user, AtomicInteger accepted) {
        String key = UUID.randomUUID().toString();
        LockSupport.parkNanos(
                Duration.ofMillis(ThreadLocalRandom.current().nextInt(3000)).toNanos());
        Instant deadline = Instant.now().plusSeconds(90);
        String place = null; // the shopper's place in the sale's line, kept on every retry
        while (true) {
            Api.Response response;
            try {
                response = place == null
                        ? api.purchase(sale, user, 1, "Idempotency-Key", key)
                        : api.purchase(sale, user, 1, "Idempotency-Key", key, "Line-Place", place);
            } catch (UncheckedIOException busyBox) { // no connection in time: retried like a 503
                LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
                continue;
            }
            if (response.status() != 503 || Instant.now().isAfter(deadline)) {
                if (response.status() == 201 || response.status() == 202) {
                    accepted.incrementAndGet();
                }
                return new Answer(
                        user,
                        key,
                        response.status(),
                        response.status() >= 400 ? response.code() : "",
                        response.text("orderId"));
            }
            assertThat(response.header("Retry-After")).isPresent();
            assertThat(response.code())
                    .isIn(
                            "UNAVAILABLE",
                            ProblemCode.SALE_REBUILDING.code(),
                            ProblemCode.BEYOND_STOCK.code(),
                            ProblemCode.IN_LINE.code(),
                            ProblemCode.UNITS_HELD.code());
            place = response.header("Line-Place").orElse(place);
            LockSupport.parkNanos(
                    Duration.ofMillis(200 + ThreadLocalRandom.current().nextInt(300))
                            .toNanos());
        }
    }

    @Test
    void a_redis_restarted_behind_postgres_is_caught_up_without_a_purchase() throws Exception {
        int stock = 40;
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        long sale = api.createSale(stock, 1);
        List<Api.Response> first = Api.concurrently(10, n -> api.purchase(sale, "behind-a-" + sale + "-" + n, 1));
        assertThat(first).allSatisfy(response -> assertThat(response.status()).isEqualTo(201));
        Thread.sleep(1500); // past the AOF's fsync: the copy holds the first ten
        Path before = REDIS.copyData();
        List<Api.Response> second = Api.concurrently(15, n -> api.purchase(sale, "behind-b-" + sale + "-" + n, 1));
        assertThat(second).allSatisfy(response -> assertThat(response.status()).isEqualTo(201));
        assertThat(redisRemaining(sale)).isEqualTo(15);

        // A failover to a replica that missed the last writes: Redis comes back with the older state.
        REDIS.kill();
        REDIS.restoreData(before);
        REDIS.restart();
        // The restored copy holds the first ten (30 left), unless the rebuild watch has caught it up already:
        // a rebuild's mark says which, since the copy was taken before any rebuild of the sale.
        assertThat(redisRemaining(sale)).isIn(30L, 15L);
        api.setMode("SYNC");

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(redisRemaining(sale)).isEqualTo(15);
            assertThat(rebuiltAt(sale))
                    .as("caught up by a rebuild: the restored Redis was behind")
                    .isNotNull();
        });
        // The per-user totals came back too: a second-wave shopper at the limit is refused by Redis.
        Api.Response again = purchaseAfterHold(sale, "behind-b-" + sale + "-0");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.code()).isEqualTo("PURCHASE_LIMIT_REACHED");

        List<Api.Response> third = Api.concurrently(60, n -> purchaseAfterHold(sale, "behind-c-" + sale + "-" + n));
        assertThat(third.stream().filter(response -> response.status() == 201)).hasSize(15);
        assertThat(third.stream().filter(response -> response.status() != 201))
                .allSatisfy(response -> assertThat(response.code()).isEqualTo("SOLD_OUT"));
        assertThat(confirmedUnits(sale)).isEqualTo(stock);
        assertThat(api.stock(sale).body().path("balanced").asBoolean()).isTrue();
    }

    @Test
    void an_admin_rebuild_refuses_purchases_meanwhile_and_leaves_the_sale_balanced() throws Exception {
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        long sale = api.createSale(20, 2);
        assertThat(api.purchase(sale, "admin-rebuild-" + sale, 2).status()).isEqualTo(201);
        redis.opsForHash().put("{sale:" + sale + "}", "remaining", "20"); // tampered: Redis ahead of Postgres

        Api.Response rebuilt = api.post("/api/v1/admin/sales/" + sale + "/rebuild", Tokens.admin(), Map.of());
        assertThat(rebuilt.status()).isEqualTo(200);
        assertThat(rebuilt.body().path("redisRemaining").asLong()).isEqualTo(18);
        assertThat(rebuilt.body().path("balanced").asBoolean()).isTrue();
        Api.Response held = api.purchase(sale, "admin-rebuild-other-" + sale, 1);
        assertThat(held.status()).isEqualTo(503);
        assertThat(held.code()).isEqualTo(ProblemCode.SALE_REBUILDING.code());
        assertThat(held.header("Retry-After")).isPresent();
        assertThat(api.purchase(sale, "admin-rebuild-shopper-" + sale, 1).status())
                .isEqualTo(503);
        assertThat(api.post("/api/v1/admin/sales/" + sale + "/rebuild", Tokens.shopper("x"), Map.of())
                        .status())
                .isEqualTo(403);
        assertThat(purchaseAfterHold(sale, "admin-rebuild-" + sale).code()).isEqualTo("PURCHASE_LIMIT_REACHED");
    }

    @Test
    void a_sale_that_ended_without_its_redis_state_is_refused_as_not_active_and_not_rebuilt() throws Exception {
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        long sale = api.createSale(20, 2, Instant.now().plusSeconds(2));
        assertThat(api.purchase(sale, "ended-" + sale, 1).status()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() ->
                        assertThat(api.purchase(sale, "late-" + sale, 1).code()).isEqualTo("SALE_NOT_ACTIVE"));
        redis.delete("{sale:" + sale + "}"); // Redis lost the ended sale's state

        Api.Response late = api.purchase(sale, "too-late-" + sale, 1);
        assertThat(late.status()).isEqualTo(409);
        assertThat(late.code()).isEqualTo("SALE_NOT_ACTIVE");
        Thread.sleep(500); // a rebuild, had one been queued, runs at once
        assertThat(redis.hasKey("{sale:" + sale + "}"))
                .as("an ended sale is not rebuilt")
                .isFalse();
        assertThat(api.get("/api/v1/sales/" + sale, Tokens.shopper("x")).text("state"))
                .isEqualTo("ENDED");
    }

    /**
     * A purchase retried while the sale is frozen after a rebuild, as a client does: after a share of
     * Retry-After, keeping its place in the sale's line.
     */
    private Api.Response purchaseAfterHold(long sale, String user) {
        return api.purchaseInLine(sale, user, 1, 30);
    }

    private long confirmedUnits(long sale) {
        return jdbc.sql(
                        "select coalesce(sum(quantity), 0) from purchase_order where sale_id = :id and status = 'CONFIRMED'")
                .param("id", sale)
                .query(Long.class)
                .single();
    }

    /** Accepted orders not yet final in Postgres (the worker still has them). */
    private long queuedOrNotFinal(long sale, List<Answer> answers) {
        List<String> accepted = answers.stream()
                .filter(answer -> answer.status() == 202)
                .map(Answer::orderId)
                .toList();
        long written = jdbc.sql("select count(*) from purchase_order where sale_id = :id and status <> 'QUEUED'")
                .param("id", sale)
                .query(Long.class)
                .single();
        long syncAccepted =
                answers.stream().filter(answer -> answer.status() == 201).count();
        return Math.max(0, accepted.size() + syncAccepted - written);
    }
}
