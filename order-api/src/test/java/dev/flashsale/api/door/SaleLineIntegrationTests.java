package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.SaleLines;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.support.RedisCommandCalls;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * A sale's line end to end (issue 37): the units go to the first places, whoever the door turns away, and
 * places behind the stock get units only once the places ahead let a round pass; exact counts in Redis
 * and Postgres. A door of 4 for served places (their own, decision 0023) that lets nobody wait makes the
 * crowd meet it: served places are told IN_LINE and come back with their place.
 */
@TestPropertySource(
        properties = {
            "app.door.algorithm=fixed",
            "app.door.max-limit=4",
            "app.door.line.max-in-flight=4",
            "app.door.line.max-wait=10ms",
            // Two seconds: a round of one second ended quietly while a cold context's first purchases were
            // still on their way (places 6 and 7 lost to 22-25 in 1 of 3 runs on an idle box).
            "app.door.line.round=2s",
            "app.door.line.refresh=50ms"
        })
class SaleLineIntegrationTests extends ApiIntegrationTest {

    private static final Duration ROUND = Duration.ofSeconds(2);

    @Autowired
    SaleLines lines;

    @Autowired
    StockLedger ledger;

    @Autowired
    MeterRegistry meters;

    @BeforeEach
    void sync() {
        api.setMode("SYNC");
    }

    private static long placeOf(Api.Response response) {
        return Long.parseLong(response.header("Line-Place").orElseThrow().split("\\.")[1]);
    }

    /** Asks again with the shopper's place until the answer is no line answer, at most {@code within}. */
    private Api.Response untilFinal(long sale, String shopper, Api.Response first, Duration within) {
        Api.Response answer = first;
        Instant deadline = Instant.now().plus(within);
        while (Set.of("IN_LINE", "BEYOND_STOCK", "UNITS_HELD").contains(answer.code())
                && Instant.now().isBefore(deadline)) {
            sleep(answer.code().equals("IN_LINE") ? 20 : 100);
            answer = api.purchase(
                    sale, shopper, 1, "Line-Place", answer.header("Line-Place").orElseThrow());
        }
        return answer;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void the_units_go_to_the_first_places_in_the_line_whoever_the_door_turns_away() throws Exception {
        int stock = 20;
        int crowd = 300;
        long sale = api.createSale(stock, 1);
        List<Api.Response> firsts = Api.concurrently(crowd, i -> api.purchase(sale, "line-" + sale + "-" + i, 1));
        Map<Long, Integer> shopperAt = new TreeMap<>();
        for (int i = 0; i < crowd; i++) {
            assertThat(firsts.get(i).status()).isIn(201, 503);
            shopperAt.put(placeOf(firsts.get(i)), i);
        }
        assertThat(shopperAt.keySet()).as("one place each, in one line").hasSize(crowd);
        // The places the stock covers are handed out one by one; behind them, from blocks (PlaceBlocks), so
        // a block's last places may go to nobody.
        assertThat(shopperAt.keySet())
                .as("every place the stock covers went to a shopper")
                .containsAll(LongStream.range(0, stock).boxed().toList());

        List<Api.Response> finals = Api.concurrently(
                crowd, i -> untilFinal(sale, "line-" + sale + "-" + i, firsts.get(i), Duration.ofSeconds(30)));

        Map<String, Long> answers = finals.stream()
                .collect(Collectors.groupingBy(
                        r -> r.status() + (r.status() >= 400 ? " " + r.code() : ""), Collectors.counting()));
        assertThat(answers).containsOnlyKeys("201", "409 SOLD_OUT").containsEntry("201", (long) stock);
        List<Long> winningPlaces = new ArrayList<>();
        shopperAt.forEach((place, shopper) -> {
            if (finals.get(shopper).status() == 201) {
                winningPlaces.add(place);
            }
        });
        assertThat(winningPlaces)
                .as("the first 20 places won, however often the door turned them away")
                .containsExactly(
                        0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L);
        assertThat(firsts.stream().filter(r -> r.code().equals("IN_LINE")))
                .as("the door of 4 turned served places away, and they kept them")
                .isNotEmpty();
        assertThat(redisRemaining(sale)).isZero();
        assertThat(pgConfirmedOrders(sale)).isEqualTo(stock);
        assertThat(pgRemaining(sale)).isZero();
    }

    @Test
    void a_line_answer_says_the_place_the_front_and_when_to_come_back() {
        long sale = api.createSale(2, 1);
        lines.join(sale, 2, ROUND, null); // a shopper ahead holds places 0 and 1, and has not come back yet
        Timer joins = meters.get("flashsale.line.join").tag("from", "line").timer();
        long joinedBefore = joins.count();

        Api.Response behind = api.purchase(sale, "behind-" + sale, 1);

        assertThat(behind.status()).isEqualTo(503);
        assertThat(behind.code()).isEqualTo("BEYOND_STOCK");
        assertThat(behind.body().path("place").asLong()).isEqualTo(2);
        assertThat(behind.body().path("serving").asLong()).isEqualTo(2);
        assertThat(behind.text("linePlace"))
                .isEqualTo(behind.header("Line-Place").orElseThrow());
        assertThat(behind.header("Retry-After").map(Integer::parseInt))
                .as("until the round ends, at most the round")
                .hasValueSatisfying(seconds -> assertThat(seconds).isBetween(1, (int) ROUND.toSeconds()));
        assertThat(behind.header("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(joins.count())
                .as("its place came from the line's script call, timed")
                .isGreaterThan(joinedBefore);
    }

    @Test
    void keyed_purchases_behind_the_front_ask_redis_nothing_about_their_shopper_once_its_buyers_are_read() {
        long sale = api.createSale(2, 1);
        lines.join(sale, 2, ROUND, null); // a shopper ahead holds places 0 and 1, and has not come back yet
        long beforeFirst = boughtBeforeChecks();

        Api.Response first = api.purchase(sale, "first-" + sale, 1, "Idempotency-Key", "k-first-" + sale);

        assertThat(first.code()).isEqualTo("BEYOND_STOCK");
        assertThat(boughtBeforeChecks() - beforeFirst)
                .as("a keyed purchase joining a line this instance has not read yet asks Redis: one check")
                .isEqualTo(1);
        buyersRead(sale);
        long before = boughtBeforeChecks();
        for (int i = 0; i < 10; i++) {
            String shopper = "next-" + sale + "-" + i;
            String key = "k-" + shopper;
            Api.Response joined = api.purchase(sale, shopper, 1, "Idempotency-Key", key);
            Api.Response again = api.purchase(
                    sale,
                    shopper,
                    1,
                    "Idempotency-Key",
                    key,
                    "Line-Place",
                    joined.header("Line-Place").orElseThrow());
            assertThat(List.of(joined.code(), again.code())).containsOnly("BEYOND_STOCK");
            assertThat(placeOf(again)).isEqualTo(placeOf(joined));
        }
        assertThat(boughtBeforeChecks() - before)
                .as("first attempts and retries read this instance's reading of the sale's buyers")
                .isZero();
    }

    @Test
    void a_buyer_who_lost_the_answer_and_joins_again_gets_the_order_from_the_reading_of_the_buyers() {
        long sale = api.createSale(2, 1);
        String shopper = "lost-" + sale;
        Api.Response bought = api.purchase(sale, shopper, 1, "Idempotency-Key", "k-" + shopper);
        assertThat(bought.status()).as(bought.toString()).isEqualTo(201);
        lines.join(sale, 5, ROUND, null); // the line reaches past its front
        // Their place forgotten, as a shopper's served before the sale had a line: they join at the back.
        redis.delete("{sale:" + sale + "}:line:shoppers");
        buyersRead(sale);
        long before = boughtBeforeChecks();

        Api.Response replay = api.purchase(sale, shopper, 1, "Idempotency-Key", "k-" + shopper);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(bought.text("orderId"));
        assertThat(boughtBeforeChecks() - before).isZero();
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(1);
    }

    /**
     * Waits until this instance has read the sale's buyers: a new keyed shopper's first attempt behind the
     * front then asks Redis nothing (the line is read every 50 ms here).
     */
    private void buyersRead(long sale) {
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            long before = boughtBeforeChecks();
            String probe = "probe-" + UUID.randomUUID();
            assertThat(api.purchase(sale, probe, 1, "Idempotency-Key", "k-" + probe)
                            .code())
                    .isEqualTo("BEYOND_STOCK");
            return boughtBeforeChecks() == before;
        });
    }

    /** Redis's count of HEXISTS calls: the line's only one is SaleLines.boughtBefore. */
    private long boughtBeforeChecks() {
        return RedisCommandCalls.of(redis).getOrDefault("hexists", 0L);
    }

    @Test
    void places_nobody_ahead_claims_go_to_the_next_places_once_a_round_has_passed_quietly() {
        long sale = api.createSale(2, 1);
        lines.join(sale, 1, ROUND, null); // two shoppers ahead who never come back
        lines.join(sale, 1, ROUND, null);
        String shopper = "next-" + sale;

        Api.Response first = api.purchase(sale, shopper, 1);
        assertThat(first.code()).isEqualTo("BEYOND_STOCK");
        Api.Response last = untilFinal(sale, shopper, first, Duration.ofSeconds(10));

        assertThat(last.status()).isEqualTo(201);
        assertThat(redisRemaining(sale)).isEqualTo(1);
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
    }

    @Test
    void nobody_is_told_sold_out_while_a_held_unit_may_come_back_and_the_line_gets_it_when_it_does() {
        long sale = api.createSale(1, 1);
        UUID held = OrderIds.next();
        assertThat(ledger.reserve(sale, held, "ghost-" + sale, 1, PurchasePath.SYNC, Instant.now(), false))
                .isInstanceOf(ReserveResult.Reserved.class);
        String shopper = "waits-" + sale;

        Api.Response first = api.purchase(sale, shopper, 1);
        assertThat(first.status()).as(first.toString()).isEqualTo(503);
        assertThat(first.code()).isIn("BEYOND_STOCK", "UNITS_HELD");
        Api.Response again = api.purchase(
                sale, shopper, 1, "Line-Place", first.header("Line-Place").orElseThrow());
        assertThat(again.status()).as("still held: not sold out").isEqualTo(503);

        ledger.release(sale, held, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "TEST");
        Api.Response last = untilFinal(sale, shopper, again, Duration.ofSeconds(10));

        assertThat(last.status()).isEqualTo(201);
        assertThat(redisRemaining(sale)).isZero();
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
    }

    @Test
    void a_place_is_bound_to_its_shopper_sale_and_quantity() {
        long sale = api.createSale(2, 2);
        lines.join(sale, 2, ROUND, null);
        Api.Response mine = api.purchase(sale, "owner-" + sale, 1);
        String place = mine.header("Line-Place").orElseThrow();
        Map<String, Api.Response> misuses = new HashMap<>();
        misuses.put("another shopper", api.purchase(sale, "thief-" + sale, 1, "Line-Place", place));
        misuses.put("another quantity", api.purchase(sale, "owner-" + sale, 2, "Line-Place", place));
        misuses.put(
                "an earlier place",
                api.purchase(sale, "owner-" + sale, 1, "Line-Place", place.replaceFirst("\\.\\d+\\.", ".0.")));
        misuses.put("not a place", api.purchase(sale, "owner-" + sale, 1, "Line-Place", "x"));

        assertThat(misuses).allSatisfy((misuse, answer) -> {
            assertThat(answer.status()).as(misuse).isEqualTo(400);
            assertThat(answer.code()).as(misuse).isEqualTo("LINE_PLACE_INVALID");
        });
        assertThat(redisRemaining(sale)).isEqualTo(2);
    }
}
