package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.door.DoorProperties;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Tokens;
import dev.flashsale.api.support.WorkerProcess;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** End to end: the API under test, the real worker process, real Redis, Postgres and RabbitMQ. */
class PurchaseIntegrationTests extends ApiIntegrationTest {

    private static WorkerProcess worker;

    @Autowired
    DataSource dataSource;

    @Autowired
    MeterRegistry meters;

    @Autowired
    DoorProperties door;

    @BeforeEach
    void breakersClosed() {
        closeBreakers();
    }

    @BeforeAll
    static void startWorker() throws Exception {
        worker = WorkerProcess.start("purchase");
    }

    @AfterAll
    static void stopWorker() throws Exception {
        worker.close();
    }

    private static Map<Integer, Long> byStatus(List<Api.Response> responses) {
        return responses.stream().collect(Collectors.groupingBy(Api.Response::status, Collectors.counting()));
    }

    /**
     * A burst may be shed by admission control on a slow box: such a refusal is a 503 UNAVAILABLE with
     * Retry-After that reserved nothing, and counts as the shopper's "no". Returns how many were shed.
     */
    private static long shed(List<Api.Response> responses) {
        List<Api.Response> refused =
                responses.stream().filter(r -> r.status() == 503).toList();
        assertThat(refused).allSatisfy(r -> {
            assertThat(r.code()).isIn("UNAVAILABLE", "IN_LINE", "BEYOND_STOCK", "UNITS_HELD");
            assertThat(r.header("Retry-After")).isPresent();
        });
        return refused.size();
    }

    /**
     * A shopper as a storefront behaves: a 503 (the door shedding a burst, or the sale's line: it reserved
     * nothing and carries Retry-After) is retried after a jittered share of Retry-After, with the shopper's
     * place in the line, until a final answer (at most 40 times). So a burst on a slow box still ends with
     * every unit sold and every other shopper told SOLD_OUT.
     */
    private Api.Response purchaseRetrying(long sale, String user) {
        return api.purchaseInLine(sale, user, 1, 40);
    }

    private static Map<String, Long> byCode(List<Api.Response> responses) {
        return responses.stream()
                .filter(r -> r.status() >= 400)
                .collect(Collectors.groupingBy(Api.Response::code, Collectors.counting()));
    }

    /** What the ASYNC path did, for a failure message: outcomes, confirm times, the broker breaker. */
    private String asyncDiagnosis() {
        StringBuilder diagnosis = new StringBuilder("ASYNC outcomes:");
        meters.find("flashsale.purchases")
                .tag("mode", "ASYNC")
                .counters()
                .forEach(counter -> diagnosis
                        .append(' ')
                        .append(counter.getId().getTag("outcome"))
                        .append('=')
                        .append((long) counter.count()));
        for (Timer publish : meters.find("flashsale.purchase.publish").timers()) {
            diagnosis
                    .append("; publish ")
                    .append(publish.getId().getTag("outcome"))
                    .append(" n=")
                    .append(publish.count())
                    .append(" mean ")
                    .append((long) publish.mean(TimeUnit.MILLISECONDS))
                    .append(" ms max ")
                    .append((long) publish.max(TimeUnit.MILLISECONDS))
                    .append(" ms");
        }
        CircuitBreaker broker = breakers.circuitBreaker("broker");
        return diagnosis
                .append("; broker breaker ")
                .append(broker.getState())
                .append(' ')
                .append(broker.getMetrics().getNumberOfSlowCalls())
                .append(" slow")
                .toString();
    }

    /**
     * {@code shoppers} shoppers at once, each buying one unit of the sale: {@code sold} of them are answered
     * {@code status}, every other one SOLD_OUT (409).
     */
    private List<Api.Response> crowd(long sale, String prefix, int shoppers, int status, long sold) throws Exception {
        List<Api.Response> responses = Api.concurrently(shoppers, i -> purchaseRetrying(sale, prefix + sale + "-" + i));
        assertThat(byStatus(responses).keySet()).isSubsetOf(Set.of(status, 409));
        assertThat(byStatus(responses)).containsEntry(status, sold);
        assertThat(byCode(responses)).containsEntry("SOLD_OUT", shoppers - sold);
        return responses;
    }

    private void assertBalanced(long saleId, long initial, long sold) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Api.Response stock = api.stock(saleId);
            assertThat(stock.body().path("queued").asLong()).isZero();
            assertThat(stock.body().path("balanced").asBoolean())
                    .as(stock.body().toString())
                    .isTrue();
        });
        Api.Response stock = api.stock(saleId);
        assertThat(stock.body().path("confirmed").asLong()).isEqualTo(sold);
        assertThat(stock.body().path("redisRemaining").asLong()).isEqualTo(initial - sold);
        assertThat(stock.body().path("dbRemaining").asLong()).isEqualTo(initial - sold);
        assertThat(pgConfirmedOrders(saleId)).isEqualTo(sold);
    }

    @Test
    void sync_sells_exactly_the_stock_to_500_concurrent_shoppers() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(100, 1);

        List<Api.Response> responses = crowd(sale, "sync-", 500, 201, 100);

        assertThat(responses.stream().filter(r -> r.status() == 201).map(r -> r.text("status")))
                .containsOnly("CONFIRMED");
        assertThat(redisRemaining(sale)).isZero();
        assertThat(pgRemaining(sale)).isZero();
        assertBalanced(sale, 100, 100);
    }

    @Test
    void a_combined_sync_transaction_refuses_only_the_orders_postgres_cannot_take() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(100, 1);
        // Postgres holds fewer units than Redis: orders inside one combined transaction are refused one by one.
        jdbc.sql("update sale_stock set remaining = 40 where sale_id = :id")
                .param("id", sale)
                .update();
        DistributionSummary batches =
                meters.get("flashsale.purchase.group.size").tag("path", "sync").summary();
        long batchesBefore = batches.count();
        double ordersBefore = batches.totalAmount();

        crowd(sale, "partial-", 300, 201, 40);

        assertThat(pgConfirmedOrders(sale)).isEqualTo(40);
        assertThat(pgRemaining(sale)).isZero();
        // Every unit Postgres refused went back to Redis, and nothing is held.
        assertThat(redisRemaining(sale)).isEqualTo(60);
        assertThat(redis.opsForHash().get("{sale:" + sale + "}", "held")).isEqualTo("0");
        assertThat((batches.totalAmount() - ordersBefore) / (batches.count() - batchesBefore))
                .as("orders per transaction")
                .isGreaterThan(1.0);
    }

    @Test
    void async_accepts_exactly_the_stock_and_the_worker_confirms_every_accepted_order() throws Exception {
        api.setMode("ASYNC");
        long sale = api.createSale(100, 1);

        List<Api.Response> responses = crowd(sale, "async-", 500, 202, 100);

        assertThat(meters.get("flashsale.purchase.group.size")
                        .tag("path", "async")
                        .summary()
                        .max())
                .as("orders in the largest message")
                .isGreaterThan(1.0);
        Api.Response accepted =
                responses.stream().filter(r -> r.status() == 202).findFirst().orElseThrow();
        assertThat(accepted.header("Retry-After")).isPresent();
        assertThat(accepted.header("Location")).hasValue("/api/v1/orders/" + accepted.text("orderId"));
        assertThat(redisRemaining(sale)).isZero();
        assertBalanced(sale, 100, 100);
        assertThat(pgRemaining(sale)).isZero();
        api.setMode("SYNC");
    }

    @Test
    void one_shopper_firing_50_purchases_at_once_gets_exactly_the_limit() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(100, 2);

        List<Api.Response> responses = Api.concurrently(50, i -> api.purchase(sale, "greedy-" + sale, 1));

        assertThat(byStatus(responses)).containsOnly(Map.entry(201, 2L), Map.entry(409, 48L));
        assertThat(byCode(responses)).containsOnly(Map.entry("PURCHASE_LIMIT_REACHED", 48L));
        assertThat(jdbc.sql("select sum(quantity) from purchase_order where sale_id = :id and user_id = :user")
                        .param("id", sale)
                        .param("user", "greedy-" + sale)
                        .query(Long.class)
                        .single())
                .isEqualTo(2);
        assertBalanced(sale, 100, 2);
    }

    @Test
    void twenty_concurrent_requests_with_one_idempotency_key_make_one_order() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(50, 2);
        String user = "careful-" + sale;

        List<Api.Response> responses =
                Api.concurrently(20, i -> api.purchase(sale, user, 1, "Idempotency-Key", "checkout-" + sale));

        assertThat(byStatus(responses)).containsOnly(Map.entry(201, 20L));
        assertThat(responses.stream().map(r -> r.text("orderId")).collect(Collectors.toSet()))
                .hasSize(1);
        assertThat(jdbc.sql("select count(*) from purchase_order where sale_id = :id")
                        .param("id", sale)
                        .query(Long.class)
                        .single())
                .isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(49);

        Api.Response otherBody = api.purchase(sale, user, 2, "Idempotency-Key", "checkout-" + sale);
        assertThat(otherBody.status()).isEqualTo(422);
        assertThat(otherBody.code()).isEqualTo("IDEMPOTENCY_KEY_REUSED");
        long otherSale = api.createSale(50, 2);
        Api.Response otherSaleResponse = api.purchase(otherSale, user, 1, "Idempotency-Key", "checkout-" + sale);
        assertThat(otherSaleResponse.status()).isEqualTo(422);
        assertThat(redisRemaining(otherSale)).isEqualTo(50);
        assertBalanced(sale, 50, 1);
    }

    @Test
    void a_replayed_key_in_async_answers_202_with_the_same_order_and_a_replayed_refusal_stays_refused()
            throws Exception {
        api.setMode("ASYNC");
        long sale = api.createSale(1, 1);
        Api.Response first = api.purchase(sale, "first-" + sale, 1, "Idempotency-Key", "k-" + sale);
        assertThat(first.status()).isEqualTo(202);
        List<Api.Response> replays =
                Api.concurrently(10, i -> api.purchase(sale, "first-" + sale, 1, "Idempotency-Key", "k-" + sale));
        assertThat(replays).allSatisfy(replay -> {
            assertThat(replay.status()).isEqualTo(202);
            assertThat(replay.text("orderId")).isEqualTo(first.text("orderId"));
        });

        // SOLD_OUT is final: it is answered once the worker has written the one unit, which could not come back.
        await().atMost(Duration.ofSeconds(30))
                .until(() -> "CONFIRMED"
                        .equals(api.get("/api/v1/orders/" + first.text("orderId"), Tokens.shopper("first-" + sale))
                                .text("status")));
        Api.Response soldOut = api.purchase(sale, "second-" + sale, 1, "Idempotency-Key", "k2-" + sale);
        assertThat(soldOut.code()).isEqualTo("SOLD_OUT");
        Api.Response soldOutAgain = api.purchase(sale, "second-" + sale, 1, "Idempotency-Key", "k2-" + sale);
        assertThat(soldOutAgain.status()).isEqualTo(409);
        assertThat(soldOutAgain.code()).isEqualTo("SOLD_OUT");
        assertBalanced(sale, 1, 1);
        api.setMode("SYNC");
    }

    @Test
    void flipping_the_mode_while_shoppers_buy_keeps_the_stock_balanced() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(300, 1);
        CompletableFuture<Void> flips = CompletableFuture.runAsync(() -> {
            for (String mode : List.of("ASYNC", "SYNC", "ASYNC", "SYNC")) {
                sleep(150);
                assertThat(api.setMode(mode).status()).isEqualTo(200);
            }
        });
        List<Api.Response> responses = new java.util.ArrayList<>();
        for (int wave = 0; wave < 6; wave++) {
            int offset = wave * 100;
            responses.addAll(Api.concurrently(100, i -> purchaseRetrying(sale, "flip-" + sale + "-" + (offset + i))));
        }
        flips.get();

        shed(responses);
        Map<Integer, Long> statuses = byStatus(responses);
        assertThat(statuses.keySet()).isSubsetOf(Set.of(201, 202, 409, 503));
        assertThat(statuses.getOrDefault(201, 0L) + statuses.getOrDefault(202, 0L))
                .isEqualTo(300);
        assertBalanced(sale, 300, 300);
    }

    @Test
    void a_queued_order_is_visible_at_once_and_becomes_confirmed() throws Exception {
        api.setMode("ASYNC");
        long sale = api.createSale(10, 1);
        Api.Response accepted;
        // Hold the sale's stock row so the worker cannot write yet: the order must still be visible.
        try (Connection blocker = dataSource.getConnection()) {
            blocker.setAutoCommit(false);
            blocker.createStatement().execute("select * from sale_stock where sale_id = " + sale + " for update");
            accepted = api.purchase(sale, "watcher-" + sale, 1);
            assertThat(accepted.status()).isEqualTo(202);
            Api.Response queued =
                    api.get("/api/v1/orders/" + accepted.text("orderId"), Tokens.shopper("watcher-" + sale));
            assertThat(queued.status()).isEqualTo(200);
            assertThat(queued.text("status")).isEqualTo("QUEUED");
            assertThat(queued.text("mode")).isEqualTo("ASYNC");
            assertThat(queued.header("Retry-After")).isPresent();
            blocker.rollback();
        }
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(
                                api.get("/api/v1/orders/" + accepted.text("orderId"), Tokens.shopper("watcher-" + sale))
                                        .text("status"))
                        .isEqualTo("CONFIRMED"));
        api.setMode("SYNC");
    }

    @Test
    void a_killed_worker_loses_and_duplicates_nothing() throws Exception {
        api.setMode("ASYNC");
        long sale = api.createSale(400, 1);
        List<Api.Response> responses = Api.concurrently(400, i -> api.purchase(sale, "kill-" + sale + "-" + i, 1));
        // A 503 (no confirm in time, or the door's limit on a burst the box cannot serve in time) must have
        // released its units; every 202 must be sold. The door never admits fewer than its floor at once.
        assertThat(byStatus(responses).keySet()).isSubsetOf(Set.of(202, 503));
        assertThat(responses.stream().filter(r -> r.status() == 503))
                .allSatisfy(r -> assertThat(r.header("Retry-After")).isPresent());
        long accepted = byStatus(responses).getOrDefault(202, 0L);
        assertThat(accepted).as(this::asyncDiagnosis).isGreaterThanOrEqualTo(door.minLimit());
        await().atMost(Duration.ofSeconds(30)).until(() -> pgConfirmedOrders(sale) > 0);
        worker.kill();
        worker = WorkerProcess.start("purchase-restarted");

        assertBalanced(sale, 400, accepted);
        assertThat(responses.stream()
                        .filter(r -> r.status() == 202)
                        .map(r -> api.get("/api/v1/orders/" + r.text("orderId"), Tokens.admin())
                                .text("status")))
                .containsOnly("CONFIRMED");
        api.setMode("SYNC");
    }

    @Test
    void prefer_wait_answers_201_when_the_worker_confirms_in_time() {
        api.setMode("ASYNC");
        long sale = api.createSale(10, 1);
        Api.Response response = api.purchase(sale, "patient-" + sale, 1, "Prefer", "wait=5");
        assertThat(response.status()).isEqualTo(201);
        assertThat(response.text("status")).isEqualTo("CONFIRMED");
        assertThat(response.text("mode")).isEqualTo("ASYNC");
        assertThat(response.header("Preference-Applied")).hasValue("wait=5");
        api.setMode("SYNC");
    }

    @Test
    void only_the_owner_or_an_admin_sees_an_order() {
        api.setMode("SYNC");
        long sale = api.createSale(10, 1);
        Api.Response bought = api.purchase(sale, "owner-" + sale, 1);
        String path = "/api/v1/orders/" + bought.text("orderId");

        Api.Response own = api.get(path, Tokens.shopper("owner-" + sale));
        assertThat(own.status()).isEqualTo(200);
        assertThat(own.text("status")).isEqualTo("CONFIRMED");
        assertThat(own.body().has("userId")).isFalse();
        assertThat(api.get(path, Tokens.admin()).status()).isEqualTo(200);
        Api.Response other = api.get(path, Tokens.shopper("stranger"));
        assertThat(other.status()).isEqualTo(404);
        assertThat(other.code()).isEqualTo("ORDER_NOT_FOUND");
        assertThat(api.get(path, null).status()).isEqualTo(401);
    }

    @Test
    void shoppers_cannot_use_admin_endpoints() {
        String shopper = Tokens.shopper("mallory");
        assertThat(api.get("/api/v1/admin/mode", shopper).status()).isEqualTo(403);
        assertThat(api.put("/api/v1/admin/mode", shopper, Map.of("mode", "ASYNC"))
                        .status())
                .isEqualTo(403);
        assertThat(api.get("/api/v1/admin/sales/1/stock", shopper).code()).isEqualTo("FORBIDDEN");
    }

    @Test
    void refuses_bad_purchases_with_their_codes() {
        api.setMode("SYNC");
        long sale = api.createSale(5, 2);
        assertThat(api.purchase(999_999_999L, "u", 1).code()).isEqualTo("SALE_NOT_FOUND");
        Function<Api.Response, String> code = Api.Response::code;
        assertThat(code.apply(api.purchase(sale, "u", 0))).isEqualTo("VALIDATION_FAILED");
        assertThat(code.apply(api.purchase(sale, "u", 3))).isEqualTo("VALIDATION_FAILED");
        Api.Response badKey = api.purchase(sale, "u", 1, "Idempotency-Key", "x".repeat(129));
        assertThat(badKey.status()).isEqualTo(400);
        assertThat(badKey.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(api.postRaw("/api/v1/sales/" + sale + "/orders", Tokens.shopper("u"), "[]")
                        .status())
                .isEqualTo(400);
        assertThat(redisRemaining(sale)).isEqualTo(5);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
