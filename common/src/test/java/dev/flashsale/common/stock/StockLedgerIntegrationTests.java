package dev.flashsale.common.stock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.PurchasePath;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The Lua scripts against the real local Redis (scripts/services.sh up). */
@Tag("redis-cluster")
class StockLedgerIntegrationTests {

    private static LettuceConnectionFactory connections;
    private static StringRedisTemplate redis;
    private static StockLedger ledger;
    private static SaleStock sales;
    private static StockRebuild rebuilds;
    private static PendingReservations pending;
    private final Instant now = Instant.now();
    private long sale;

    @BeforeAll
    static void connect() {
        connections = LocalRedis.connect();
        redis = new StringRedisTemplate(connections);
        StockProperties properties = new StockProperties(Duration.ofMinutes(10), Duration.ofMinutes(10));
        ledger = new StockLedger(redis, properties, new InstanceLeases(redis));
        sales = new SaleStock(redis);
        rebuilds = new StockRebuild(redis, properties);
        pending = new PendingReservations(redis);
    }

    @AfterAll
    static void disconnect() {
        connections.destroy();
    }

    @BeforeEach
    void openSale() {
        sale = LocalRedis.openSale(sales, 1_000_000_000L, now);
    }

    /** Units the user holds or bought in the sale, as Redis counts them (the per-user totals). */
    private long unitsOf(long saleId, String userId) {
        Object units = redis.opsForHash().get(new SaleKeys(saleId).users(), userId);
        return units == null ? 0 : Long.parseLong((String) units);
    }

    private ReserveResult reserve(UUID order, String user, int quantity) {
        return ledger.reserve(sale, order, user, quantity, PurchasePath.ASYNC, now, false);
    }

    @Test
    void loading_a_sale_twice_changes_nothing() {
        reserve(OrderIds.next(), "a", 1);
        assertThat(sales.loadSale(sale, 99, 5, now, now.plusSeconds(1))).isFalse();
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 9, 1));
    }

    /**
     * A record names the instance whose request holds it in its date (decision 0029); one written before
     * instances had leases reads and moves as before, and a user id with colons stays whole either way.
     */
    @Test
    void a_record_carries_its_instance_through_its_moves_and_one_without_reads_as_before() {
        UUID held = OrderIds.next();
        assertThat(reserve(held, "a:b@c", 1)).isInstanceOf(ReserveResult.Reserved.class);
        ledger.advance(sale, held, ReservationState.PENDING, ReservationState.PUBLISHED);
        Reservation published = ledger.find(sale, held).orElseThrow();
        assertThat(published.instance()).isNotEmpty().matches("[0-9a-z]+");
        assertThat(published.userId()).isEqualTo("a:b@c");
        assertThat(published.createdAt().toEpochMilli()).isEqualTo(now.toEpochMilli());

        UUID old = OrderIds.next();
        redis.opsForHash()
                .put(new SaleKeys(sale).orders(), old.toString(), "RESERVED:ASYNC::1:" + now.toEpochMilli() + ":x:y");
        redis.opsForHash().increment(new SaleKeys(sale).users(), "x:y", 1);
        redis.opsForHash().increment(new SaleKeys(sale).sale(), "remaining", -1);
        redis.opsForHash().increment(new SaleKeys(sale).sale(), "held", 1);
        Reservation before = ledger.find(sale, old).orElseThrow();
        assertThat(before.instance()).isEmpty();
        assertThat(before.userId()).isEqualTo("x:y");
        assertThat(ledger.release(sale, old, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "GONE")
                        .changed())
                .isTrue();
        assertThat(unitsOf(sale, "x:y")).isZero();
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 9, 1));
    }

    @Test
    void reserving_the_same_order_twice_decrements_once() {
        UUID order = OrderIds.next();
        assertThat(reserve(order, "a", 2)).isEqualTo(new ReserveResult.Reserved(8, 0));
        assertThat(reserve(order, "a", 2))
                .isEqualTo(new ReserveResult.Existing(ReservationState.RESERVED, PurchasePath.ASYNC, ""));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 8, 2));
        assertThat(unitsOf(sale, "a")).isEqualTo(2);
    }

    @Test
    void refuses_beyond_the_stock_and_beyond_the_user_limit_and_outside_the_sale_window() {
        List<UUID> held = new ArrayList<>();
        held.add(OrderIds.next());
        assertThat(reserve(held.getFirst(), "a", 2)).isInstanceOf(ReserveResult.Reserved.class);
        assertThat(reserve(OrderIds.next(), "a", 1)).isEqualTo(new ReserveResult.Refused("PURCHASE_LIMIT_REACHED", 2));
        for (int i = 0; i < 4; i++) {
            UUID order = OrderIds.next();
            reserve(order, "u" + i, 2);
            held.add(order);
        }
        assertThat(reserve(OrderIds.next(), "late", 1))
                .as("none left, but units held by reservations may come back: SOLD_OUT would not be final")
                .isEqualTo(new ReserveResult.HeldByOthers());
        for (UUID order : held.subList(0, 4)) {
            ledger.advance(sale, order, ReservationState.PENDING, ReservationState.CONFIRMED);
        }
        assertThat(reserve(OrderIds.next(), "late", 3))
                .as("2 units still held could not make up 3")
                .isEqualTo(new ReserveResult.Refused("SOLD_OUT", 0));
        ledger.advance(sale, held.getLast(), ReservationState.PENDING, ReservationState.CONFIRMED);
        assertThat(reserve(OrderIds.next(), "late", 1)).isEqualTo(new ReserveResult.Refused("SOLD_OUT", 0));
        assertThat(ledger.reserve(sale, OrderIds.next(), "b", 1, PurchasePath.SYNC, now.plusSeconds(601), false))
                .isEqualTo(new ReserveResult.Refused("SALE_NOT_ACTIVE", 0));
        assertThat(ledger.reserve(sale + 1, OrderIds.next(), "b", 1, PurchasePath.SYNC, now, false))
                .as("no stock key: nothing reserved, never unlimited, and no refusal to remember (it is rebuilt)")
                .isEqualTo(new ReserveResult.Unavailable("MISSING"));
    }

    @Test
    void a_reading_counts_the_shoppers_in_one_field_that_releases_keep_and_a_rebuild_recounts() {
        StockReadings readings = new StockReadings(redis);
        reserve(OrderIds.next(), "a", 1);
        UUID released = OrderIds.next();
        reserve(released, "b", 1);
        reserve(OrderIds.next(), "a", 1);
        assertThat(readings.read(sale, -1, 100))
                .isEqualTo(new StockReadings.StockReading(7L, 3, null, 2, Set.of("a", "b")));

        ledger.release(sale, released, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "GONE");
        assertThat(readings.read(sale, 2, 100))
                .as("b keeps a place at 0 (a replay of b's key must reach Redis): the count, and so the list, stand")
                .isEqualTo(new StockReadings.StockReading(8L, 2, null, 2, null));

        String freeze = rebuilds.freeze(sale, Duration.ofSeconds(10));
        assertThat(rebuilds.rebuild(
                        sale,
                        freeze,
                        10,
                        2,
                        now.minusSeconds(60),
                        now.plusSeconds(600),
                        Duration.ZERO,
                        rebuilds.reservationRecords(sale),
                        List.of()))
                .isPresent();
        StockReadings.StockReading rebuilt = readings.read(sale, 2, 100);
        assertThat(rebuilt.buyerCount())
                .as("rebuilt from a Postgres without orders: only a's holds remain, and the count says so")
                .isEqualTo(1);
        assertThat(rebuilt.buyers()).containsExactly("a");
        assertThat(rebuilt.remaining()).isEqualTo(8);

        redis.opsForHash().delete("{sale:" + sale + "}", "buyers");
        assertThat(readings.read(sale, -1, 100).buyerCount())
                .as("a sale loaded before the count existed: its shoppers are counted instead")
                .isEqualTo(1);
    }

    @Test
    void a_rebuild_lists_every_reservation_record_of_a_sale_whichever_master_holds_its_slot() {
        // One sale in each third of the slots: on the local cluster, one on each of its three masters.
        List<Long> spread = new ArrayList<>();
        for (long id = sale; spread.size() < 3; id++) {
            if (SlotHash.getSlot(new SaleKeys(id).sale()) * 3 / SlotHash.SLOT_COUNT == spread.size()) {
                spread.add(id);
            }
        }
        for (long id : spread) {
            if (id != sale) {
                assertThat(sales.loadSale(id, 10, 2, now.minusSeconds(60), now.plusSeconds(600)))
                        .isTrue();
            }
            List<UUID> orders = List.of(OrderIds.next(), OrderIds.next(), OrderIds.next());
            orders.forEach(order -> ledger.reserve(id, order, "a-" + order, 1, PurchasePath.ASYNC, now, false));

            assertThat(rebuilds.reservationRecords(id))
                    .as("sale %d, slot %d", id, SlotHash.getSlot(new SaleKeys(id).sale()))
                    .containsExactlyInAnyOrderElementsOf(orders);
        }
    }

    @Test
    void a_release_gives_units_back_exactly_once() {
        UUID order = OrderIds.next();
        reserve(order, "a", 2);
        Transition first = ledger.release(
                sale, order, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "UNAVAILABLE");
        Transition second = ledger.release(
                sale, order, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "UNAVAILABLE");
        assertThat(first).isEqualTo(new Transition(true, ReservationState.RESERVED));
        assertThat(second).isEqualTo(new Transition(false, ReservationState.RELEASED));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 10, 0));
        assertThat(unitsOf(sale, "a")).isZero();
        assertThat(reserve(order, "a", 2))
                .as("a released order id stays dead")
                .isInstanceOf(ReserveResult.Existing.class);
    }

    @Test
    void settling_an_order_whose_sale_redis_lost_leaves_the_sale_missing_not_a_stray_hash() {
        UUID order = OrderIds.next();
        reserve(order, "a", 2);
        redis.delete(new SaleKeys(sale).sale());

        assertThat(ledger.settleConfirmed(sale, List.of(order))).containsExactly(true);

        assertThat(redis.hasKey(new SaleKeys(sale).sale())).isFalse();
        assertThat(sales.counters(sale)).isEmpty();
        assertThat(reserve(OrderIds.next(), "b", 1)).isEqualTo(new ReserveResult.Unavailable("MISSING"));
    }

    @Test
    void a_released_order_that_postgres_confirmed_after_all_takes_its_units_again_once() {
        UUID order = OrderIds.next();
        reserve(order, "a", 2);
        ledger.release(sale, order, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "ABANDONED");
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 10, 0));

        assertThat(ledger.confirmReleased(sale, order)).isEqualTo(new Transition(true, ReservationState.RELEASED));
        assertThat(ledger.confirmReleased(sale, order)).isEqualTo(new Transition(false, ReservationState.CONFIRMED));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 8, 0));
        assertThat(unitsOf(sale, "a")).isEqualTo(2);
        assertThat(ledger.confirmReleased(sale, OrderIds.next())).isEqualTo(new Transition(false, null));
    }

    @Test
    void an_order_handed_to_the_worker_cannot_be_released_by_the_api() {
        UUID order = OrderIds.next();
        reserve(order, "a", 1);
        ledger.advance(sale, order, EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED);
        assertThat(pending.olderThan(sale, Duration.ZERO, 0, 10))
                .as("a published order still holds stock")
                .extracting(PendingReservations.Pending::orderId)
                .containsExactly(order);
        assertThat(ledger.release(
                        sale, order, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "UNAVAILABLE"))
                .isEqualTo(new Transition(false, ReservationState.PUBLISHED));
        assertThat(ledger.advance(sale, order, ReservationState.PENDING, ReservationState.CONFIRMED))
                .isEqualTo(new Transition(true, ReservationState.PUBLISHED));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 9, 0));
        assertThat(pending.olderThan(sale, Duration.ZERO, 0, 10)).isEmpty();
    }

    @Test
    void marking_a_batch_published_indexes_and_publishes_each_order_once_even_after_redis_lost_its_scripts() {
        UUID first = OrderIds.next();
        UUID second = OrderIds.next();
        UUID released = OrderIds.next();
        reserve(first, "a", 1);
        reserve(second, "b", 2);
        reserve(released, "c", 1);
        ledger.release(sale, released, EnumSet.of(ReservationState.RESERVED), ReservationState.RELEASED, "TEST");
        try (RedisConnection connection = connections.getConnection()) {
            connection.scriptingCommands().scriptFlush(); // as after a restart: the pipelined EVALSHA fails
        }

        assertThat(ledger.markPublished(sale, List.of(first, second, released)))
                .containsExactly(
                        new Transition(true, ReservationState.RESERVED),
                        new Transition(true, ReservationState.RESERVED),
                        new Transition(false, ReservationState.RELEASED));
        assertThat(ledger.markPublished(sale, List.of(second, first)))
                .as("pipelined this time, and changing nothing")
                .containsExactly(
                        new Transition(false, ReservationState.PUBLISHED),
                        new Transition(false, ReservationState.PUBLISHED));
        assertThat(List.of(first, second)).allSatisfy(order -> {
            assertThat(ledger.saleOf(order)).contains(sale);
            assertThat(ledger.find(sale, order).map(Reservation::state)).contains(ReservationState.PUBLISHED);
        });
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 7, 3));
        assertThat(ledger.markPublished(sale, List.of())).isEmpty();
    }

    @Test
    void only_sales_holding_stock_are_listed_for_the_reconciler_in_one_round_trip() {
        long idle = sale + 1;
        long never = sale + 2;
        assertThat(sales.loadSale(idle, 10, 2, now.minusSeconds(60), now.plusSeconds(600)))
                .isTrue();
        UUID order = OrderIds.next();
        reserve(order, "a", 1);
        assertThat(pending.salesWithAny(List.of(sale, idle, never))).containsExactly(sale);

        ledger.advance(sale, order, ReservationState.PENDING, ReservationState.CONFIRMED);
        assertThat(pending.salesWithAny(List.of(sale, idle, never))).isEmpty();
        assertThat(pending.salesWithAny(List.of())).isEmpty();
    }

    /** A sale of its own with {@code stock} units and a per-user limit of {@code limit}. */
    private long openSale(int stock, int limit) {
        long other = sale + 1 + ThreadLocalRandom.current().nextLong(1_000_000L);
        assertThat(sales.loadSale(other, stock, limit, now.minusSeconds(60), now.plusSeconds(600)))
                .isTrue();
        return other;
    }

    private static ReserveRequest ask(UUID order, String user, int quantity) {
        return new ReserveRequest(order, user, quantity, PurchasePath.SYNC, Instant.now(), false);
    }

    private List<ReserveRequest> asks(String... users) {
        return Arrays.stream(users).map(user -> ask(OrderIds.next(), user, 1)).toList();
    }

    private long pendingCount(long saleId) {
        return redis.opsForZSet().zCard(new SaleKeys(saleId).pending());
    }

    @Test
    void a_batch_counts_a_shoppers_earlier_order_against_the_limit() {
        long limitOne = openSale(10, 1);

        assertThat(ledger.reserveAll(limitOne, asks("a", "b", "a")))
                .containsExactly(
                        new ReserveResult.Reserved(9, 0),
                        new ReserveResult.Reserved(8, 0),
                        new ReserveResult.Refused("PURCHASE_LIMIT_REACHED", 1));
        assertThat(sales.counters(limitOne)).contains(new SaleCounters(10, 8, 2));
        assertThat(unitsOf(limitOne, "a")).isEqualTo(1);
    }

    @Test
    void a_batch_that_crosses_the_sell_out_holds_the_rest_back_until_nothing_is_held() {
        long three = openSale(3, 1);

        List<ReserveResult> first = ledger.reserveAll(three, asks("a", "b", "c", "d", "e"));

        assertThat(first)
                .containsExactly(
                        new ReserveResult.Reserved(2, 0),
                        new ReserveResult.Reserved(1, 0),
                        new ReserveResult.Reserved(0, 0),
                        new ReserveResult.HeldByOthers(),
                        new ReserveResult.HeldByOthers());
        assertThat(pendingCount(three)).isEqualTo(3);
        for (String held : redis.opsForZSet().range(new SaleKeys(three).pending(), 0, -1)) {
            ledger.advance(three, UUID.fromString(held), ReservationState.PENDING, ReservationState.CONFIRMED);
        }
        assertThat(ledger.reserveAll(three, asks("d", "e")))
                .as("nothing held any more: the refusal is final")
                .containsExactly(new ReserveResult.Refused("SOLD_OUT", 0), new ReserveResult.Refused("SOLD_OUT", 0));
        assertThat(sales.counters(three)).contains(new SaleCounters(3, 0, 0));
    }

    @Test
    void the_same_order_twice_in_a_batch_is_taken_once_and_the_second_finds_the_first() {
        UUID order = OrderIds.next();
        UUID refused = OrderIds.next();
        ReserveRequest overLimit = new ReserveRequest(refused, "b", 3, PurchasePath.ASYNC, now, true);

        assertThat(ledger.reserveAll(sale, List.of(ask(order, "a", 2), ask(order, "a", 2), overLimit, overLimit)))
                .containsExactly(
                        new ReserveResult.Reserved(8, 0),
                        new ReserveResult.Existing(ReservationState.RESERVED, PurchasePath.SYNC, ""),
                        new ReserveResult.Refused("PURCHASE_LIMIT_REACHED", 0),
                        new ReserveResult.Existing(
                                ReservationState.REFUSED, PurchasePath.ASYNC, "PURCHASE_LIMIT_REACHED"));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 8, 2));
        assertThat(unitsOf(sale, "a")).isEqualTo(2);
        assertThat(pendingCount(sale)).isEqualTo(1);
    }

    @Test
    void a_batch_is_served_in_the_order_given_not_by_shopper_or_order_id() {
        long two = openSale(2, 1);
        List<ReserveRequest> batch = asks("zoe", "yan", "xia", "wim");

        assertThat(ledger.reserveAll(two, batch))
                .extracting(result -> result.getClass().getSimpleName())
                .containsExactly("Reserved", "Reserved", "HeldByOthers", "HeldByOthers");
        assertThat(redis.opsForZSet().range(new SaleKeys(two).pending(), 0, -1))
                .containsExactlyInAnyOrder(
                        batch.get(0).orderId().toString(),
                        batch.get(1).orderId().toString());
        assertThat(redis.opsForHash().entries(new SaleKeys(two).users()))
                .containsOnly(Map.entry("zoe", "1"), Map.entry("yan", "1"));
    }

    @Test
    void a_frozen_sale_answers_rebuilding_to_a_whole_batch_and_a_replay_its_order() {
        UUID earlier = OrderIds.next();
        reserve(earlier, "a", 1);
        rebuilds.freeze(sale, Duration.ofSeconds(10));

        assertThat(ledger.reserveAll(sale, List.of(ask(OrderIds.next(), "b", 1), ask(earlier, "a", 1))))
                .containsExactly(
                        new ReserveResult.Unavailable("REBUILDING"),
                        new ReserveResult.Existing(ReservationState.RESERVED, PurchasePath.ASYNC, ""));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 9, 1));
        assertThat(pendingCount(sale)).isEqualTo(1);
    }

    @Test
    void a_mixed_batch_leaves_exact_counters_shoppers_totals_and_pending_set() {
        ReserveRequest tooLate =
                new ReserveRequest(OrderIds.next(), "d", 1, PurchasePath.SYNC, now.plusSeconds(601), false);

        assertThat(ledger.reserveAll(
                        sale,
                        List.of(
                                ask(OrderIds.next(), "a", 2),
                                ask(OrderIds.next(), "b", 1),
                                ask(OrderIds.next(), "a", 1),
                                tooLate,
                                ask(OrderIds.next(), "c", 1),
                                ask(OrderIds.next(), "b", 1))))
                .containsExactly(
                        new ReserveResult.Reserved(8, 0),
                        new ReserveResult.Reserved(7, 0),
                        new ReserveResult.Refused("PURCHASE_LIMIT_REACHED", 2),
                        new ReserveResult.Refused("SALE_NOT_ACTIVE", 0),
                        new ReserveResult.Reserved(6, 0),
                        new ReserveResult.Reserved(5, 1));
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 5, 5));
        assertThat(redis.opsForHash().get(new SaleKeys(sale).sale(), "buyers"))
                .as("a, b and c are new to the per-user totals; d was refused")
                .isEqualTo("3");
        assertThat(redis.opsForHash().entries(new SaleKeys(sale).users()))
                .containsOnly(Map.entry("a", "2"), Map.entry("b", "2"), Map.entry("c", "1"));
        assertThat(pendingCount(sale)).isEqualTo(4);
        assertThat(ledger.reserveAll(sale, List.of())).isEmpty();
    }

    @Test
    void a_batch_larger_than_one_call_carries_is_served_in_order_across_calls() {
        List<ReserveRequest> crowd = new ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            crowd.add(ask(OrderIds.next(), "crowd-" + i, 1));
        }

        List<ReserveResult> results = ledger.reserveAll(sale, crowd);

        assertThat(results).hasSize(1_200);
        assertThat(results.subList(0, 10))
                .allSatisfy(result -> assertThat(result).isInstanceOf(ReserveResult.Reserved.class));
        assertThat(results.subList(10, 1_200)).containsOnly(new ReserveResult.HeldByOthers());
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 0, 10));
        assertThat(pendingCount(sale)).isEqualTo(10);
    }

    @Test
    void two_hundred_concurrent_reservations_never_oversell() throws Exception {
        AtomicInteger reserved = new AtomicInteger();
        try (var executor = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                String user = "crowd-" + i;
                futures.add(executor.submit(() -> {
                    if (reserve(OrderIds.next(), user, 1) instanceof ReserveResult.Reserved) {
                        reserved.incrementAndGet();
                    }
                }));
            }
            for (var future : futures) {
                future.get();
            }
        }
        assertThat(reserved.get()).isEqualTo(10);
        assertThat(sales.counters(sale)).contains(new SaleCounters(10, 0, 10));
    }
}
