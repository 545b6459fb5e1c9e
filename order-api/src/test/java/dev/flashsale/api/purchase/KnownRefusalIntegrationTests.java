package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.refusal.KnownRefusalProperties;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.StockReadings;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * Refusals of a sold-out sale from memory (issue 31), end to end: exact counts in Redis and Postgres, the
 * Redis scripts the refusals did not run, units that come back sold again, replays that get their order.
 */
@TestPropertySource(properties = "app.door.line.round=1s")
class KnownRefusalIntegrationTests extends ApiIntegrationTest {

    @Autowired
    MeterRegistry meters;

    @Autowired
    StockLedger ledger;

    @BeforeEach
    void sync() {
        api.setMode("SYNC");
    }

    private double refusedFromMemory() {
        return meters.get("flashsale.refusals.known")
                .tag("code", "SOLD_OUT")
                .counter()
                .count();
    }

    /** This instance's count of a counter, summed over its tags. */
    private double total(String counter) {
        return meters.find(counter).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    /**
     * Purchases this instance sent to the reserve script, by their counted outcome (a global count of
     * EVALSHA is no proof here: other test JVMs share this Redis).
     */
    private double purchasesSentToRedis() {
        return total("flashsale.purchases");
    }

    private long orderRecords(long sale) {
        return redis.opsForHash().size("{sale:" + sale + "}:orders")
                + redis.opsForHash().size("{sale:" + sale + "}:refusals");
    }

    private static Map<String, Long> answers(List<Api.Response> responses) {
        return responses.stream()
                .collect(Collectors.groupingBy(
                        r -> r.status() + (r.status() >= 400 ? " " + r.code() : ""), Collectors.counting()));
    }

    /**
     * Sells the last {@code units} to {@code crowd} shoppers, half of them keyed, each asking again as a 503
     * tells it (with its place in the sale's line), and checks the final answers: every unit sold once,
     * everyone else refused SOLD_OUT once no held unit could come back.
     */
    private void sellOut(long sale, int units, int crowd) throws Exception {
        List<Api.Response> responses = Api.concurrently(
                crowd,
                i -> i % 2 == 0
                        ? api.purchaseInLine(sale, "crowd-" + sale + "-" + i, 1, 40)
                        : api.purchaseInLine(sale, "crowd-" + sale + "-" + i, 1, 40, "Idempotency-Key", "k-" + i));
        assertThat(answers(responses))
                .containsOnly(Map.entry("201", (long) units), Map.entry("409 SOLD_OUT", (long) crowd - units));
        assertThat(redisRemaining(sale)).isZero();
    }

    /** Waits until a keyed purchase of a shopper without an order is refused from memory. */
    private void awaitBuyersKnown(long sale) {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            double before = refusedFromMemory();
            Api.Response probe = api.purchase(
                    sale,
                    "probe-" + sale,
                    1,
                    "Idempotency-Key",
                    UUID.randomUUID().toString());
            assertThat(probe.code()).isEqualTo("SOLD_OUT");
            assertThat(refusedFromMemory()).isEqualTo(before + 1);
        });
    }

    @Test
    void a_sold_out_sale_refuses_300_more_shoppers_from_memory_without_running_a_redis_script() throws Exception {
        long sale = api.createSale(20, 1);
        sellOut(sale, 20, 200);
        awaitBuyersKnown(sale);
        double memoryBefore = refusedFromMemory();
        double sentBefore = purchasesSentToRedis();
        long recordsBefore = orderRecords(sale);

        List<Api.Response> late = Api.concurrently(
                300,
                i -> i % 2 == 0
                        ? api.purchase(sale, "late-" + sale + "-" + i, 1)
                        : api.purchase(sale, "late-" + sale + "-" + i, 1, "Idempotency-Key", "late-" + i));

        assertThat(answers(late)).containsOnly(Map.entry("409 SOLD_OUT", 300L));
        assertThat(refusedFromMemory() - memoryBefore).isEqualTo(300);
        assertThat(purchasesSentToRedis() - sentBefore)
                .as("every purchase that reaches the reserve script is counted by its outcome: none did")
                .isZero();
        assertThat(orderRecords(sale))
                .as("a keyed refusal by Redis leaves a REFUSED record: the 150 keyed late shoppers left none")
                .isEqualTo(recordsBefore);
        assertThat(redisRemaining(sale)).isZero();
        assertThat(pgConfirmedOrders(sale)).isEqualTo(20);
    }

    @Test
    void a_replay_of_a_key_whose_order_exists_gets_its_order_from_an_instance_that_believes_sold_out()
            throws Exception {
        long sale = api.createSale(5, 1);
        String winner = "winner-" + sale;
        Api.Response won = api.purchase(sale, winner, 1, "Idempotency-Key", "checkout-" + sale);
        assertThat(won.status()).isEqualTo(201);
        sellOut(sale, 4, 100);
        awaitBuyersKnown(sale);
        double memoryBefore = refusedFromMemory();

        Api.Response replay = api.purchase(sale, winner, 1, "Idempotency-Key", "checkout-" + sale);

        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(won.text("orderId"));
        assertThat(refusedFromMemory()).isEqualTo(memoryBefore);
        Api.Response unkeyed = api.purchase(sale, winner, 1);
        assertThat(unkeyed.code())
                .as("no replay without a key: refused like anyone")
                .isEqualTo("SOLD_OUT");
        assertThat(pgConfirmedOrders(sale)).isEqualTo(5);
    }

    @Test
    void a_unit_given_back_after_sell_out_goes_to_the_first_place_waiting_and_nobody_is_told_sold_out_before()
            throws Exception {
        long sale = api.createSale(10, 1);
        UUID held = OrderIds.next();
        assertThat(ledger.reserve(sale, held, "holder-" + sale, 1, PurchasePath.SYNC, Instant.now(), false))
                .isInstanceOf(ReserveResult.Reserved.class);
        for (int i = 0; i < 9; i++) { // places 0 to 8 buy the 9 units left
            assertThat(api.purchase(sale, "early-" + sale + "-" + i, 1).status())
                    .isEqualTo(201);
        }
        Api.Response next = api.purchase(sale, "next-" + sale, 1); // place 9
        Api.Response after = api.purchase(sale, "after-" + sale, 1); // place 10
        assertThat(List.of(next, after))
                .as("a unit is still held: not sold out, and the places ahead cover what is left")
                .allSatisfy(answer -> assertThat(answer.code()).isEqualTo("BEYOND_STOCK"));

        assertThat(ledger.release(sale, held, ReservationState.PENDING, ReservationState.RELEASED, "GIVEN_BACK")
                        .changed())
                .isTrue();
        Api.Response nextWon = api.purchaseInLine(sale, "next-" + sale, 1, 40, "Line-Place", place(next));

        assertThat(nextWon.status()).as("the first place waiting gets the unit").isEqualTo(201);
        // Once this instance's reading of the line shows nothing left or held (within a refresh or two).
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(api.purchase(sale, "after-" + sale, 1, "Line-Place", place(after))
                                .code())
                        .isEqualTo("SOLD_OUT"));
        assertThat(api.purchase(sale, "newcomer-" + sale, 1).code()).isEqualTo("SOLD_OUT");
        assertThat(redisRemaining(sale)).isZero();
        assertThat(pgRemaining(sale)).isZero();
        assertThat(pgConfirmedOrders(sale)).isEqualTo(10);
    }

    private static String place(Api.Response answer) {
        return answer.header("Line-Place").orElseThrow();
    }

    @Test
    void an_instance_that_did_not_see_the_sell_out_learns_it_from_its_first_refusal_by_redis() throws Exception {
        long sale = api.createSale(3, 1);
        api.purchase(sale, "first-" + sale, 1); // this instance knows the sale, with units left
        // Another instance sells the rest, and commits it: this one is told nothing.
        for (int i = 0; i < 2; i++) {
            UUID elsewhere = OrderIds.next();
            ledger.reserve(sale, elsewhere, "elsewhere-" + i, 1, PurchasePath.SYNC, Instant.now(), false);
            ledger.advance(sale, elsewhere, ReservationState.PENDING, ReservationState.CONFIRMED);
        }
        double memoryBefore = refusedFromMemory();

        Api.Response first = api.purchase(sale, "late-" + sale, 1);
        Api.Response second = api.purchase(sale, "later-" + sale, 1);

        assertThat(first.code()).isEqualTo("SOLD_OUT");
        assertThat(second.code()).isEqualTo("SOLD_OUT");
        assertThat(second.body())
                .as("a refusal from memory has the body of the same refusal by Redis")
                .isEqualTo(first.body());
        assertThat(second.text("instance")).isEqualTo("/api/v1/sales/" + sale + "/orders");
        assertThat(second.header("Content-Type")).contains("application/problem+json");
        assertThat(refusedFromMemory() - memoryBefore)
                .as("Redis refused the first, memory the second")
                .isEqualTo(1);
    }

    @Test
    void an_instance_that_missed_the_units_coming_back_unlearns_sold_out_within_two_refreshes() throws Exception {
        long sale = api.createSale(3, 1);
        UUID held = OrderIds.next();
        ledger.reserve(sale, held, "holder-" + sale, 1, PurchasePath.SYNC, Instant.now(), false);
        for (int i = 0; i < 2; i++) {
            assertThat(api.purchase(sale, "buyer-" + sale + "-" + i, 1).status())
                    .isEqualTo(201);
        }
        Duration refresh = Duration.ofMillis(300);
        // The belief's first reading (handed to its refresher at once) reads the held unit and rightly unlearns
        // sold out: it waits until the belief has been checked, or the check races it (it failed once in CI).
        CountDownLatch checked = new CountDownLatch(1);
        StockReadings afterTheCheck = new StockReadings(redis) {
            @Override
            public StockReading read(long saleId, long knownBuyers, int maxBuyers) {
                try {
                    checked.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.read(saleId, knownBuyers, maxBuyers);
            }
        };
        // A second instance's memory: it learnt sold out, and nobody tells it the unit came back.
        KnownRefusals other = new KnownRefusals(
                afterTheCheck,
                new KnownRefusalProperties(true, refresh, 1000),
                Clock.systemUTC(),
                new SimpleMeterRegistry());
        try {
            other.know(sale, Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600), 1, 3);
            other.refusedSoldOut(sale, 1);
            assertThat(other.refusal(sale, "someone", 1, false)).isNotNull();
            checked.countDown();

            long givenBack = System.nanoTime();
            ledger.release(sale, held, ReservationState.PENDING, ReservationState.RELEASED, "GIVEN_BACK");
            await().atMost(Duration.ofSeconds(2))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> other.refusal(sale, "someone", 1, false) == null);

            assertThat(Duration.ofNanos(System.nanoTime() - givenBack))
                    .isLessThan(refresh.multipliedBy(2).plusMillis(100));
        } finally {
            other.destroy();
        }
    }
}
