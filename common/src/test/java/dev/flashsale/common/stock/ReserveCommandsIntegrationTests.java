package dev.flashsale.common.stock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.support.RedisCommandCalls;
import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * What a reserve call costs Redis in commands, counted by Redis itself ({@code INFO commandstats}, which
 * counts the commands a script runs) on a redis-server of this test's own: the shared one's counts are
 * everybody's, and resetting them is not this test's to do. Before the batched reserve (d0b065c), each order
 * ran the script alone: 11 commands inside it for a new shopper, and an EVALSHA. Until the records became
 * fields of one hash per sale, a batch cost three commands an order (its record's HMGET, HSET and EXPIRE)
 * plus six, and settling it two an order (HMGET, HSET) plus four.
 */
class ReserveCommandsIntegrationTests {

    private static final int PORT = 6441;
    private static Process server;
    private static LettuceConnectionFactory connections;
    private static StringRedisTemplate redis;
    private static StockLedger ledger;
    private static SaleStock sales;
    private static long nextSale = 1;
    private final Instant now = Instant.now();

    @BeforeAll
    static void startRedis() throws Exception {
        server = new ProcessBuilder(
                        "redis-server",
                        "--port",
                        Integer.toString(PORT),
                        "--bind",
                        "127.0.0.1",
                        "--save",
                        "",
                        "--appendonly",
                        "no")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        Instant deadline = Instant.now().plusSeconds(10);
        while (!listening()) {
            assertThat(server.isAlive() && Instant.now().isBefore(deadline))
                    .as("redis-server on %d started", PORT)
                    .isTrue();
            Thread.sleep(20);
        }
        connections = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", PORT));
        connections.afterPropertiesSet();
        redis = new StringRedisTemplate(connections);
        ledger = new StockLedger(
                redis, new StockProperties(Duration.ofMinutes(10), Duration.ofMinutes(10)), new InstanceLeases(redis));
        sales = new SaleStock(redis);
    }

    @AfterAll
    static void stopRedis() throws InterruptedException {
        if (connections != null) {
            connections.destroy();
        }
        server.destroyForcibly().waitFor();
    }

    private static boolean listening() {
        try (Socket socket = new Socket("127.0.0.1", PORT)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The commands {@code run} made Redis run, by name, less the INFO that read them. */
    private static Map<String, Long> commandsOf(Runnable run) {
        Map<String, Long> before = RedisCommandCalls.of(redis);
        run.run();
        Map<String, Long> made = new TreeMap<>();
        RedisCommandCalls.of(redis).forEach((name, calls) -> {
            long delta = calls - before.getOrDefault(name, 0L);
            if (delta > 0 && !name.equals("info")) {
                made.put(name, delta);
            }
        });
        return made;
    }

    private long openSale(int stock) {
        long sale = nextSale++;
        assertThat(sales.loadSale(sale, stock, 2, now.minusSeconds(60), now.plusSeconds(600)))
                .isTrue();
        ledger.reserve(sale, OrderIds.next(), "warm-up", 1, PurchasePath.SYNC, now, false); // loads the script
        return sale;
    }

    private List<ReserveRequest> shoppers(int count) {
        List<ReserveRequest> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            requests.add(new ReserveRequest(OrderIds.next(), "shopper-" + i, 1, PurchasePath.SYNC, now, false));
        }
        return requests;
    }

    @Test
    void a_batch_of_64_new_shoppers_costs_one_script_call_of_eight_commands() {
        long sale = openSale(1_000);
        List<ReserveRequest> batch = shoppers(64);

        Map<String, Long> commands = commandsOf(() -> assertThat(ledger.reserveAll(sale, batch))
                .allSatisfy(result -> assertThat(result).isInstanceOf(ReserveResult.Reserved.class)));

        // Read: the sale, TIME, the shoppers' totals, the orders' records. Written: the counters, the totals, the
        // records, the pending set. The records' TTL was set by the warm-up's call, a moment ago.
        assertThat(commands)
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("evalsha", 1L, "hmget", 3L, "time", 1L, "hset", 3L, "zadd", 1L));
    }

    /**
     * Issue 41: the records' hash outlives its newest record by at least the record TTL (10 s here), but its
     * TTL is renewed once a tenth of it has passed, not by every call (an EXPIRE per call was 0.12 commands per
     * order at 700/s).
     */
    @Test
    void the_records_ttl_is_renewed_once_a_tenth_of_it_has_passed_not_by_every_call() throws Exception {
        StockLedger shortLived = new StockLedger(
                redis, new StockProperties(Duration.ofSeconds(10), Duration.ofMinutes(10)), new InstanceLeases(redis));
        long sale = nextSale++;
        assertThat(sales.loadSale(sale, 100, 2, now.minusSeconds(60), now.plusSeconds(600)))
                .isTrue();
        String records = new SaleKeys(sale).orders();

        Map<String, Long> first = commandsOf(() -> shortLived.reserveAll(sale, List.of(shopper("first"))));
        assertThat(first).containsEntry("expire", 1L);
        assertThat(redis.getExpire(records)).isBetween(10L, 11L);
        Map<String, Long> soon = commandsOf(() -> shortLived.reserveAll(sale, List.of(shopper("soon"))));
        assertThat(soon).doesNotContainKey("expire");
        Thread.sleep(1100);
        Map<String, Long> later = commandsOf(() -> shortLived.reserveAll(sale, List.of(shopper("later"))));
        assertThat(later).containsEntry("expire", 1L);
        assertThat(redis.getExpire(records)).isBetween(10L, 11L);
    }

    private ReserveRequest shopper(String user) {
        return new ReserveRequest(OrderIds.next(), user, 1, PurchasePath.SYNC, now, false);
    }

    @Test
    void one_order_alone_costs_as_many_commands_as_a_batch() {
        long sale = openSale(1_000);

        Map<String, Long> commands = commandsOf(() ->
                assertThat(ledger.reserveAll(sale, shoppers(1))).containsExactly(new ReserveResult.Reserved(998, 0)));

        assertThat(commands.values().stream().mapToLong(Long::longValue).sum() - commands.get("evalsha"))
                .isEqualTo(8);
        assertThat(commands).containsEntry("evalsha", 1L);
    }

    /**
     * Issue 41: on one Redis master a batch's call counts each order's attempt and binds its Idempotency-Key
     * too, in place of a throttle call of the purchase's own (a round trip each, the most of Redis's CPU per
     * order): a SET NX each for the counter and the binding, inside the one EVALSHA.
     */
    @Test
    void a_call_that_admits_its_orders_counts_and_binds_each_in_the_same_round_trip() {
        long sale = openSale(1_000);
        List<ReserveRequest> batch = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            UUID orderId = OrderIds.next();
            batch.add(new ReserveRequest(
                    orderId,
                    "admitted-" + i,
                    1,
                    PurchasePath.SYNC,
                    now,
                    true,
                    ReservationState.WRITING,
                    new ReserveRequest.Admission(
                            "counter:" + sale + ":" + i,
                            2_000,
                            2,
                            "binding:" + sale + ":" + i,
                            "fp|" + orderId,
                            60_000)));
        }

        Map<String, Long> commands = commandsOf(() -> assertThat(ledger.reserveAll(sale, batch))
                .allSatisfy(result -> assertThat(result).isInstanceOf(ReserveResult.Reserved.class)));

        assertThat(commands)
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("evalsha", 1L, "hmget", 4L, "time", 1L, "hset", 3L, "zadd", 1L, "set", 16L));
        assertThat(redis.opsForValue().get("binding:" + sale + ":3"))
                .isEqualTo("fp|" + batch.get(3).orderId());
        assertThat(redis.opsForValue().get("counter:" + sale + ":3")).isEqualTo("1");
        assertThat(redis.getExpire("counter:" + sale + ":3")).isBetween(0L, 2L);
    }

    /**
     * An admitted order over its shopper's limit is THROTTLED, one whose key was bound before is BOUND (to
     * the binding it found), in the batch's own order; neither holds a unit nor binds anything.
     */
    @Test
    void a_call_that_admits_answers_throttled_and_bound_without_reserving() {
        long sale = openSale(1_000);
        String counter = "counter:" + sale;
        String binding = "binding:" + sale;
        List<ReserveRequest> batch = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            UUID orderId = OrderIds.next();
            String key = i == 0 ? binding : i == 1 ? binding : null; // the second sends the first's key again
            batch.add(new ReserveRequest(
                    orderId,
                    "bot-" + sale,
                    1,
                    PurchasePath.SYNC,
                    now,
                    key != null,
                    ReservationState.WRITING,
                    new ReserveRequest.Admission(
                            counter, 2_000, 3, key, key == null ? null : "fp|" + orderId, 60_000)));
        }

        List<ReserveResult> results = ledger.reserveAll(sale, batch);

        assertThat(results.get(0)).isEqualTo(new ReserveResult.Reserved(998, 0));
        assertThat(results.get(1))
                .isEqualTo(new ReserveResult.Bound("fp|" + batch.get(0).orderId()));
        assertThat(results.get(2)).isEqualTo(new ReserveResult.Reserved(997, 1));
        assertThat(results.get(3))
                .isInstanceOfSatisfying(
                        ReserveResult.Throttled.class,
                        throttled -> assertThat(throttled.waitMillis()).isBetween(1L, 2_000L));
        assertThat(redis.opsForValue().get(counter)).isEqualTo("4");
        assertThat(redis.opsForValue().get(binding))
                .isEqualTo("fp|" + batch.get(0).orderId());
        assertThat(redis.<String, String>opsForHash().get(new SaleKeys(sale).users(), "bot-" + sale))
                .isEqualTo("2");
    }

    @Test
    void remembered_refusals_cost_a_read_and_a_write_of_their_own_hash_per_call() {
        long sale = openSale(1);
        ledger.advance(sale, pendingOrder(sale), ReservationState.PENDING, ReservationState.CONFIRMED); // nothing held
        List<ReserveRequest> keyed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            keyed.add(new ReserveRequest(OrderIds.next(), "keyed-" + i, 1, PurchasePath.SYNC, now, true));
        }

        Map<String, Long> commands = commandsOf(() ->
                assertThat(ledger.reserveAll(sale, keyed)).containsOnly(new ReserveResult.Refused("SOLD_OUT", 0)));

        assertThat(commands)
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("evalsha", 1L, "hmget", 4L, "time", 1L, "hset", 1L, "expire", 1L));
        // A replay of each finds its refusal: the same answer, nothing written.
        assertThat(ledger.reserveAll(sale, keyed))
                .allSatisfy(result -> assertThat(result)
                        .isEqualTo(
                                new ReserveResult.Existing(ReservationState.REFUSED, PurchasePath.SYNC, "SOLD_OUT")));
    }

    @Test
    void a_batch_refused_sold_out_writes_nothing() {
        long sale = openSale(1);
        ledger.advance(sale, pendingOrder(sale), ReservationState.PENDING, ReservationState.CONFIRMED); // nothing held

        Map<String, Long> commands = commandsOf(() -> assertThat(ledger.reserveAll(sale, shoppers(10)))
                .containsOnly(new ReserveResult.Refused("SOLD_OUT", 0)));

        assertThat(commands)
                .as("the sale, TIME, the shoppers' totals and the orders' records read once each")
                .containsExactlyInAnyOrderEntriesOf(Map.of("evalsha", 1L, "hmget", 3L, "time", 1L));
    }

    @Test
    void settling_a_batch_of_64_costs_one_script_call_of_four_commands() {
        long sale = openSale(1_000);
        List<ReserveRequest> batch = shoppers(64);
        ledger.reserveAll(sale, batch);
        List<UUID> ids = batch.stream().map(ReserveRequest::orderId).toList();
        ledger.advance(sale, OrderIds.next(), ReservationState.PENDING, ReservationState.CONFIRMED); // loads it

        Map<String, Long> commands = commandsOf(() -> assertThat(
                        ledger.advanceAll(sale, ids, ReservationState.PENDING, ReservationState.CONFIRMED))
                .allSatisfy(transition -> assertThat(transition.changed()).isTrue()));

        // The records read and written, the sale's held count, the pending set.
        assertThat(commands)
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("evalsha", 1L, "hmget", 1L, "hset", 1L, "hincrby", 1L, "zrem", 1L));
        assertThat(redis.opsForHash().get(new SaleKeys(sale).sale(), "held")).isEqualTo("1");
        assertThat(redis.opsForZSet().size(new SaleKeys(sale).pending())).isEqualTo(1);
    }

    private static UUID pendingOrder(long sale) {
        return UUID.fromString(redis.opsForZSet()
                .range(new SaleKeys(sale).pending(), 0, 0)
                .iterator()
                .next());
    }
}
