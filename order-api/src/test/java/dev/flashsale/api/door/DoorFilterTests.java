package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.PurchaseRoute;
import dev.flashsale.api.refusal.FixedReadings;
import dev.flashsale.api.refusal.KnownRefusals;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import tools.jackson.databind.json.JsonMapper;

class DoorFilterTests {

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final FixedReadings redis = new FixedReadings();
    private final KnownRefusals known = redis.memory(Clock.systemUTC(), meters);
    private final WaitingLineProperties line = new WaitingLineProperties(
            true,
            Duration.ofMillis(500),
            100,
            10,
            Duration.ofSeconds(5),
            Duration.ofMillis(100),
            2000,
            Duration.ZERO,
            1);

    private DoorFilter door(DoorProperties.Algorithm algorithm, int min, int max) {
        return filter(new Door(
                new DoorProperties(
                        true,
                        algorithm,
                        Duration.ofMillis(20),
                        Duration.ofMillis(100),
                        min,
                        max,
                        Duration.ofSeconds(1)),
                idleCpu(),
                known,
                line,
                meters));
    }

    private Door gate;

    private DoorFilter filter(Door door) {
        // Sale 7, the usual purchase here, has stock for hours: a full door refuses it at once.
        known.know(7, Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600), 1000, 10_000_000);
        gate = door;
        return new DoorFilter(door, known, JsonMapper.builder().build());
    }

    /**
     * Through the filter, and for a purchase it left to the sale's line, through the door as the line lets
     * a served place in ({@link SaleLine}): refused with 503 when the door does not take it.
     */
    private void pass(
            DoorFilter door, MockHttpServletRequest request, MockHttpServletResponse response, FilterChain inside)
            throws Exception {
        door.doFilter(request, response, (req, res) -> {
            HttpServletRequest http = (HttpServletRequest) req;
            long sale = PurchaseRoute.saleOf(http.getRequestURI());
            if (http.getAttribute(SaleLine.SERVED_IN_LINE) != null
                    && gate.enterInTurn(http, sale).isEmpty()
                    && !known.refusesEveryone(sale)) {
                ((HttpServletResponse) res).setStatus(503);
                return;
            }
            inside.doFilter(req, res);
        });
    }

    private CpuShedding idleCpu() {
        return new CpuShedding(cpuSettings(), () -> 0.1, meters);
    }

    static CpuSheddingProperties cpuSettings() {
        return new CpuSheddingProperties(true, 0.9, 0.8, Duration.ofMillis(200), 0.5, 0.25, 0.0);
    }

    private static MockHttpServletRequest purchase() {
        return purchaseOf(7);
    }

    private static MockHttpServletRequest purchaseOf(long sale) {
        return new MockHttpServletRequest("POST", "/api/v1/sales/" + sale + "/orders");
    }

    /** A sale that opened a minute ago, for an hour more, one unit a shopper, of {@code stock} units. */
    private void openSale(long sale, long stock) {
        known.know(sale, Instant.now().minusSeconds(60), Instant.now().plusSeconds(3600), 1, stock);
    }

    /** Until {@code purchases} wait in the door's line. */
    private void awaitWaiting(int purchases) {
        await().atMost(Duration.ofSeconds(5))
                .until(() -> meters.get("flashsale.door.waiting").gauge().value() == purchases);
    }

    @Test
    void purchases_beyond_the_limit_are_refused_at_once_with_a_problem_and_retry_after() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 3);
        CountDownLatch inside = new CountDownLatch(3);
        CountDownLatch release = new CountDownLatch(1);
        FilterChain slow = (request, response) -> {
            inside.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ((HttpServletResponse) response).setStatus(201);
        };
        List<MockHttpServletResponse> held = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(3)) {
            List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                MockHttpServletResponse response = new MockHttpServletResponse();
                held.add(response);
                running.add(pool.submit(() -> {
                    pass(door, purchase(), response, slow);
                    return null;
                }));
            }
            assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();

            MockHttpServletResponse refused = new MockHttpServletResponse();
            boolean[] reached = {false};
            pass(door, purchase(), refused, (request, response) -> reached[0] = true);

            assertThat(reached[0]).isFalse();
            assertThat(refused.getStatus()).isEqualTo(503);
            assertThat(refused.getHeader("Retry-After")).isEqualTo("1");
            assertThat(refused.getContentType()).isEqualTo("application/problem+json");
            assertThat(refused.getContentAsString()).contains("\"code\":\"UNAVAILABLE\"");
            assertThat(meters.counter("flashsale.door.refused", "reason", "limit")
                            .count())
                    .isEqualTo(1);

            release.countDown();
            for (Future<?> future : running) {
                future.get(10, TimeUnit.SECONDS);
            }
        }
        assertThat(held).allSatisfy(response -> assertThat(response.getStatus()).isEqualTo(201));

        MockHttpServletResponse after = new MockHttpServletResponse();
        pass(door, purchase(), after, (request, response) -> ((HttpServletResponse) response).setStatus(201));
        assertThat(after.getStatus()).isEqualTo(201);
        assertThat(meters.get("flashsale.door.inflight").gauge().value()).isZero();
    }

    @Test
    void a_saturated_cpu_sheds_purchases_at_the_door_with_a_problem_and_retry_after() throws Exception {
        CpuShedding saturated = new CpuShedding(cpuSettings(), () -> 1.0, meters);
        saturated.sample();
        saturated.sample(); // share 0.25
        DoorFilter door = filter(new Door(
                new DoorProperties(
                        true,
                        DoorProperties.Algorithm.FIXED,
                        Duration.ofMillis(20),
                        Duration.ofMillis(100),
                        1024,
                        1024,
                        Duration.ofSeconds(1)),
                saturated,
                known,
                line,
                meters));
        int reached = 0;
        MockHttpServletResponse lastRefusal = null;
        for (int i = 0; i < 2000; i++) {
            MockHttpServletResponse response = new MockHttpServletResponse();
            boolean[] passed = {false};
            pass(door, purchase(), response, (request, r) -> {
                passed[0] = true;
                ((HttpServletResponse) r).setStatus(202);
            });
            if (passed[0]) {
                reached++;
                assertThat(response.getStatus()).isEqualTo(202);
            } else {
                lastRefusal = response;
            }
        }
        assertThat(reached).isBetween(400, 600);
        assertThat(lastRefusal).isNotNull();
        assertThat(lastRefusal.getStatus()).isEqualTo(503);
        assertThat(lastRefusal.getHeader("Retry-After")).isEqualTo("1");
        assertThat(lastRefusal.getContentAsString()).contains("\"code\":\"UNAVAILABLE\"");
        assertThat(meters.counter("flashsale.door.refused", "reason", "cpu").count())
                .isEqualTo(2000 - reached);
        assertThat(meters.counter("flashsale.door.refused", "reason", "limit").count())
                .isZero();

        boolean[] ping = {false};
        pass(
                door,
                new MockHttpServletRequest("GET", "/api/v1/ping"),
                new MockHttpServletResponse(),
                (request, r) -> ping[0] = true);
        assertThat(ping[0]).as("only purchases are shed").isTrue();
    }

    @Test
    void only_purchases_pass_the_door() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, purchase(), release);
        try {
            for (MockHttpServletRequest other : List.of(
                    new MockHttpServletRequest("GET", "/api/v1/sales/7/orders/0199"),
                    new MockHttpServletRequest("GET", "/api/v1/ping"),
                    new MockHttpServletRequest("POST", "/api/v1/sales"))) {
                boolean[] reached = {false};
                pass(door, other, new MockHttpServletResponse(), (request, response) -> reached[0] = true);
                assertThat(reached[0]).as(other.getRequestURI()).isTrue();
            }
        } finally {
            release.countDown();
            holder.join();
        }
    }

    /** Takes the door's one place with {@code request} until {@code release}; returns once it is taken. */
    private Thread holdThePlace(DoorFilter door, MockHttpServletRequest request, CountDownLatch release) {
        Thread holder = Thread.ofVirtual().start(() -> filter(door, request, () -> awaitQuietly(release)));
        await().atMost(Duration.ofSeconds(5)).until(() -> inFlight() == 1);
        return holder;
    }

    /** Purchases in progress: at the door, and of places a line serves (their own fixed limit). */
    private double inFlight() {
        return meters.get("flashsale.door.inflight").gauge().value()
                + meters.get("flashsale.door.line.inflight").gauge().value();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void purchases_of_a_sale_refused_from_memory_pass_a_full_door_and_are_not_counted() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        redis.set(0L, null, Set.of());
        openSale(9, 10);
        known.reserved(9, 0);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, purchase(), release);
        try {
            MockHttpServletResponse otherSale = new MockHttpServletResponse();
            pass(door, purchase(), otherSale, (request, response) -> {});
            assertThat(otherSale.getStatus()).as("the door is full").isEqualTo(503);

            boolean[] reached = {false};
            pass(door, purchaseOf(9), new MockHttpServletResponse(), (request, response) -> reached[0] = true);

            assertThat(reached[0]).isTrue();
            assertThat(meters.get("flashsale.door.inflight").gauge().value()).isEqualTo(1);
        } finally {
            release.countDown();
            holder.join();
        }
    }

    @Test
    void a_full_door_lets_purchases_of_a_sale_with_few_units_in_in_arrival_order() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        openSale(11, 50);
        Supplier<MockHttpServletRequest> few = () -> purchaseOf(11);
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> served = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        threads.add(holdThePlace(door, few.get(), release));
        for (int i = 0; i < 3; i++) {
            int arrival = i;
            threads.add(Thread.ofVirtual().start(() -> filter(door, few.get(), () -> served.add(arrival))));
            awaitWaiting(arrival + 1);
        }
        MockHttpServletResponse otherSale = new MockHttpServletResponse();
        pass(door, purchase(), otherSale, (request, response) -> {});
        assertThat(otherSale.getStatus())
                .as("the places a line serves have a limit of their own, and take none of the door's room")
                .isEqualTo(200);
        threads.add(Thread.ofVirtual().start(() -> filter(door, purchase(), () -> awaitQuietly(release))));
        await().atMost(Duration.ofSeconds(5)).until(() -> inFlight() == 2);
        MockHttpServletResponse fullDoor = new MockHttpServletResponse();
        pass(door, purchase(), fullDoor, (request, response) -> {});
        assertThat(fullDoor.getStatus())
                .as("a sale with stock for hours does not wait")
                .isEqualTo(503);

        release.countDown();
        for (Thread thread : threads) {
            thread.join();
        }

        assertThat(served).containsExactly(0, 1, 2);
    }

    @Test
    void a_place_the_line_serves_enters_while_the_door_is_full() throws Exception {
        // A crowd saturates the box, every purchase is late, and the adaptive limit sits at its floor: the
        // places a line serves (at most the units left, each one sold) do not wait for it.
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        openSale(11, 50);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, purchase(), release);
        MockHttpServletResponse full = new MockHttpServletResponse();
        pass(door, purchase(), full, (request, response) -> {});
        boolean[] reached = {false};

        filter(door, purchaseOf(11), () -> reached[0] = true);

        release.countDown();
        holder.join();
        assertThat(full.getStatus()).as("the door is full").isEqualTo(503);
        assertThat(reached[0]).as("the served place went in at once").isTrue();
        assertThat(meters.get("flashsale.door.waiting").gauge().value()).isZero();
    }

    @Test
    void the_first_burst_of_a_sale_this_instance_has_not_looked_up_waits_in_line() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        Supplier<MockHttpServletRequest> unseen = () -> purchaseOf(14);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, unseen.get(), release);
        boolean[] reached = {false};
        Thread waiter = Thread.ofVirtual().start(() -> filter(door, unseen.get(), () -> reached[0] = true));
        awaitWaiting(1);

        release.countDown();
        holder.join();
        waiter.join();

        assertThat(reached[0]).isTrue();
    }

    @Test
    void no_more_purchases_wait_than_the_sale_has_units_left() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        openSale(15, 5);
        known.reserved(15, 1);
        Supplier<MockHttpServletRequest> last = () -> purchaseOf(15);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, last.get(), release);
        try {
            Thread waiter = Thread.ofVirtual().start(() -> filter(door, last.get(), () -> {}));
            awaitWaiting(1);
            MockHttpServletResponse behind = new MockHttpServletResponse();
            long started = System.nanoTime();

            pass(door, last.get(), behind, (request, response) -> {});

            assertThat(behind.getStatus())
                    .as("one unit left, one in line already")
                    .isEqualTo(503);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMillis(400));
            release.countDown();
            waiter.join();
        } finally {
            release.countDown();
            holder.join();
        }
    }

    @Test
    void a_purchase_that_waits_in_line_too_long_is_refused_with_a_problem() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        openSale(12, 50);
        Supplier<MockHttpServletRequest> few = () -> purchaseOf(12);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, few.get(), release);
        try {
            MockHttpServletResponse waited = new MockHttpServletResponse();
            long started = System.nanoTime();

            pass(door, few.get(), waited, (request, response) -> {});

            assertThat(waited.getStatus()).isEqualTo(503);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        } finally {
            release.countDown();
            holder.join();
        }
    }

    @Test
    void a_purchase_in_line_leaves_it_at_once_when_its_sale_sells_out() throws Exception {
        DoorFilter door = door(DoorProperties.Algorithm.FIXED, 1, 1);
        redis.set(0L, null, Set.of());
        openSale(13, 50);
        Supplier<MockHttpServletRequest> few = () -> purchaseOf(13);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = holdThePlace(door, few.get(), release);
        try {
            boolean[] reached = {false};
            Thread waiter = Thread.ofVirtual().start(() -> filter(door, few.get(), () -> reached[0] = true));
            awaitWaiting(1);

            known.reserved(13, 0);
            waiter.join(Duration.ofSeconds(2));

            assertThat(reached[0]).as("passed on, to be refused from memory").isTrue();
            assertThat(inFlight()).as("the holder alone").isEqualTo(1);
        } finally {
            release.countDown();
            holder.join();
        }
    }

    private void filter(DoorFilter door, MockHttpServletRequest request, Runnable inside) {
        try {
            pass(door, request, new MockHttpServletResponse(), (req, res) -> inside.run());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void a_disabled_door_admits_everything() throws Exception {
        DoorFilter door = filter(new Door(
                new DoorProperties(
                        false,
                        DoorProperties.Algorithm.FIXED,
                        Duration.ofMillis(20),
                        Duration.ofMillis(100),
                        1,
                        1,
                        Duration.ofSeconds(1)),
                idleCpu(),
                known,
                line,
                meters));
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = Thread.ofPlatform().start(() -> {
            try {
                pass(door, purchase(), new MockHttpServletResponse(), (request, response) -> awaitQuietly(release));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            boolean[] reached = {false};
            pass(door, purchase(), new MockHttpServletResponse(), (request, response) -> reached[0] = true);
            assertThat(reached[0]).isTrue();
        } finally {
            release.countDown();
            holder.join();
        }
    }
}
