package dev.flashsale.common.stock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.PurchasePath;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** A sale's line (join_line.lua, line_front.lua) against the real local Redis (scripts/services.sh up). */
@Tag("redis-cluster")
class SaleLinesIntegrationTests {

    private static final Duration ROUND = Duration.ofMillis(300);

    private static LettuceConnectionFactory connections;
    private static StockLedger ledger;
    private static SaleStock sales;
    private static SaleLines lines;
    private final Instant now = Instant.now();
    private long sale;

    @BeforeAll
    static void connect() {
        connections = LocalRedis.connect();
        StringRedisTemplate redis = new StringRedisTemplate(connections);
        ledger = new StockLedger(
                redis, new StockProperties(Duration.ofMinutes(10), Duration.ofMinutes(10)), new InstanceLeases(redis));
        sales = new SaleStock(redis);
        lines = new SaleLines(redis);
    }

    @AfterAll
    static void disconnect() {
        connections.destroy();
    }

    @BeforeEach
    void openSale() {
        sale = LocalRedis.openSale(sales, 3_000_000_000L, now);
    }

    private UUID reserve(String user) {
        UUID order = OrderIds.next();
        assertThat(ledger.reserve(sale, order, user, 1, PurchasePath.SYNC, now, false))
                .isInstanceOf(ReserveResult.Reserved.class);
        return order;
    }

    private SaleLines.Front front() {
        return lines.front(sale, ROUND).orElseThrow();
    }

    /** Waits out the current round and reads the front once the round after it has begun. */
    private SaleLines.Front afterRound() {
        long roundEnd = front().roundEndMillis();
        await().atMost(Duration.ofSeconds(5)).until(() -> front().roundEndMillis() > roundEnd);
        return front();
    }

    @Test
    void concurrent_arrivals_get_distinct_places_that_count_the_units_asked_for_before_them() throws Exception {
        Set<Long> places = new ConcurrentSkipListSet<>();
        try (ExecutorService crowd = Executors.newFixedThreadPool(32)) {
            for (int i = 0; i < 300; i++) {
                int quantity = i % 3 == 0 ? 2 : 1;
                crowd.submit(() -> places.add(
                        lines.join(sale, quantity, ROUND, null).orElseThrow().place()));
            }
        }
        assertThat(places).hasSize(300);
        SaleLines.Front line = front();
        assertThat(line.next()).as("100 places of 2 units, 200 of 1").isEqualTo(400);
        assertThat(line.front())
                .as("the front covers the units left when the line began")
                .isEqualTo(10);
        assertThat(new TreeSet<>(places).first()).isZero();
    }

    /**
     * Issue 37: an instance killed mid-crowd took the answers in flight with it, places included; their
     * shoppers asked again without one and were put at the back (83 % of the units to the first 1.5 x S in
     * ASYNC, against 98-100 % without the kill).
     */
    @Test
    void a_shopper_who_joins_again_gets_the_place_they_had_for_the_same_quantity_and_a_block_is_nobodys() {
        long alices = lines.join(sale, 1, ROUND, "alice").orElseThrow().place();
        lines.join(sale, 3, ROUND, null); // a block of three places, handed out by the instance that took it
        lines.join(sale, 1, ROUND, "bob");

        SaleLines.Joined again = lines.join(sale, 1, ROUND, "alice").orElseThrow();
        assertThat(again.place()).as("alice's answer was lost: her place again").isEqualTo(alices);
        assertThat(again.front().next()).as("nothing was handed out").isEqualTo(5);
        assertThat(lines.join(sale, 2, ROUND, "alice").orElseThrow().place())
                .as("another quantity is another purchase: at the back")
                .isEqualTo(5);
        assertThat(lines.join(sale, 1, ROUND, null).orElseThrow().place())
                .as("a block names nobody")
                .isEqualTo(7);
    }

    @Test
    void the_front_stays_while_the_places_ahead_keep_buying_and_moves_on_by_what_they_left_after_a_quiet_round() {
        List<Long> places = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            places.add(lines.join(sale, 1, ROUND, null).orElseThrow().place());
        }
        assertThat(front().serves(places.get(9), 1)).isTrue();
        assertThat(front().serves(places.get(10), 1))
                .as("places 10 to 14 are behind the stock")
                .isFalse();
        for (int i = 0; i < 7; i++) {
            reserve("buyer" + i);
        }
        assertThat(afterRound().front())
                .as("units were taken during the round: the places ahead are still buying")
                .isEqualTo(10);
        assertThat(afterRound().front())
                .as("a whole round without a unit taken: the 3 units nobody ahead claimed go to the next places")
                .isEqualTo(13);
        assertThat(front().givenUp()).isEqualTo(3);
        assertThat(front().serves(places.get(12), 1)).isTrue();
        assertThat(front().serves(places.get(13), 1)).isFalse();
    }

    @Test
    void units_are_kept_for_the_places_handed_out_during_a_round_until_they_have_had_a_whole_round() {
        long roundEnd = lines.join(sale, 1, ROUND, null).orElseThrow().front().roundEndMillis();
        await().atMost(Duration.ofSeconds(5)).until(() -> front().roundEndMillis() > roundEnd);
        // Nine places handed out in the second round, all of them served and none of them back yet.
        for (int i = 0; i < 9; i++) {
            lines.join(sale, 1, ROUND, null);
        }
        assertThat(afterRound().front())
                .as("the first place had two rounds and left its unit; the nine others keep theirs")
                .isEqualTo(11);
        assertThat(afterRound().front())
                .as("now the nine had a whole round too")
                .isEqualTo(20);
    }

    @Test
    void a_unit_given_back_moves_the_front_on_once_the_places_ahead_let_a_round_pass() {
        for (int i = 0; i < 12; i++) {
            lines.join(sale, 1, ROUND, null);
        }
        List<UUID> orders = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            orders.add(reserve("buyer" + i));
        }
        assertThat(afterRound().front()).isEqualTo(10);
        assertThat(afterRound().front()).as("sold out: nothing to move on by").isEqualTo(10);
        ledger.release(
                sale, orders.getFirst(), EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "TEST");
        assertThat(afterRound().front())
                .as("the unit came back during the round")
                .isEqualTo(10);
        assertThat(afterRound().front())
                .as("nobody ahead took it for a whole round")
                .isEqualTo(11);
    }

    @Test
    void a_front_counts_the_sales_buyers_and_they_are_read_in_one_go() {
        assertThat(lines.join(sale, 1, ROUND, "early").orElseThrow().front().buyers())
                .isZero();
        UUID order = reserve("first");
        reserve("second");
        ledger.release(sale, order, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "TEST");

        assertThat(front().buyers())
                .as("a shopper whose units came back still counts: their key may replay a released order")
                .isEqualTo(2);
        assertThat(lines.join(sale, 1, ROUND, "late").orElseThrow().front().buyers())
                .isEqualTo(2);
        assertThat(lines.buyers(sale)).containsExactlyInAnyOrder("first", "second");
        assertThat(lines.boughtBefore(sale, "first")).isTrue();
        assertThat(lines.boughtBefore(sale, "early"))
                .as("a place is not a purchase")
                .isFalse();
    }

    @Test
    void a_sale_without_state_in_redis_hands_out_no_place() {
        assertThat(lines.join(sale + 1, 1, ROUND, null)).isEmpty();
        assertThat(lines.front(sale + 1, ROUND)).isEmpty();
    }
}
