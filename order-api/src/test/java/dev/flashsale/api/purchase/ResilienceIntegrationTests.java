package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.TestTopology;
import dev.flashsale.api.support.Tokens;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * Dependencies failing under the API: a small pool, short timeouts and eager breakers so that pressure
 * and outages show within seconds. No worker runs here: accepted orders stay QUEUED, which the
 * conservation view counts.
 */
@TestPropertySource(
        properties = {
            "spring.datasource.hikari.maximum-pool-size=4",
            "resilience4j.bulkhead.instances.sync-db.max-concurrent-calls=4",
            "spring.jdbc.template.query-timeout=1s",
            "app.purchase.confirm-timeout=500ms",
            "resilience4j.circuitbreaker.configs.default.minimum-number-of-calls=5",
            "resilience4j.circuitbreaker.configs.default.wait-duration-in-open-state=3s",
            "app.mode.auto.sample-interval=100ms",
            "app.mode.auto.samples-to-async=3",
            "app.mode.auto.samples-to-sync=10",
            "app.mode.auto.min-time-between-switches=1s",
            // A lone SYNC purchase would wait out the 10 ms linger, and with a commit on a busy box its
            // p95 passed 1.5 x ASYNC's (floored at 10 ms): AUTO then rightly engaged in ASYNC, and the
            // switch under pressure this class is about was never tried. Without the linger a healthy SYNC
            // path is as fast as the floor.
            "app.purchase.sync.linger=0ms",
            // This class is about AUTO under database pressure with the door refusing what it cannot take at
            // once: a full door's line (for sales with few units) let the crowd wait for a locked database
            // instead, and AUTO's trial then found ASYNC no faster and moved the crowd back.
            "app.door.line.enabled=false",
            // Healthy, both paths answer a lone purchase within a few ms, and which is faster depends on the
            // box's disk that minute: with an objective of 100 ms SYNC fits whatever the disk, AUTO engages in
            // SYNC, and the failing database, not latency, must move it.
            "app.mode.auto.answer-objective=100ms"
        })
class ResilienceIntegrationTests extends ApiIntegrationTest {

    /** SYNC's and ASYNC's answer times in a switch's reason, as the model prints its estimates. */
    private static final Pattern ANSWERS =
            Pattern.compile("SYNC [^;]*answering in ([0-9.]+) ms; ASYNC [^;]*answering in ([0-9.]+) ms");

    @Autowired
    DataSource dataSource;

    @Autowired
    RabbitAdmin rabbitAdmin;

    @AfterEach
    void restore() {
        rabbitAdmin.initialize();
        closeBreakers();
        api.setMode("SYNC");
    }

    /** Holds the sale's stock row: every write of an order for this sale blocks until released. */
    private Connection lockStock(long sale) throws Exception {
        Connection blocker = dataSource.getConnection();
        blocker.setAutoCommit(false);
        blocker.createStatement().execute("select * from sale_stock where sale_id = " + sale + " for update");
        return blocker;
    }

    private void assertBalancedWith(long sale, long initial) {
        Api.Response stock = api.stock(sale);
        assertThat(stock.body().path("balanced").asBoolean())
                .as(stock.body().toString())
                .isTrue();
        assertThat(stock.body().path("redisRemaining").asLong()
                        + stock.body().path("queued").asLong()
                        + stock.body().path("confirmed").asLong())
                .isEqualTo(initial);
    }

    @Test
    void a_slow_database_under_forced_sync_answers_503_with_retry_after_and_keeps_nothing_reserved() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(50, 1);
        List<Api.Response> responses;
        try (Connection blocker = lockStock(sale)) {
            responses = Api.concurrently(12, i -> api.purchase(sale, "slow-" + sale + "-" + i, 1));
            blocker.rollback();
        }
        assertThat(responses).allSatisfy(response -> {
            assertThat(response.status()).isEqualTo(503);
            assertThat(response.code()).isEqualTo("UNAVAILABLE");
            assertThat(response.header("Retry-After")).isPresent();
        });
        assertThat(redisRemaining(sale)).isEqualTo(50);
        assertThat(pgRemaining(sale)).isEqualTo(50);
        assertBalancedWith(sale, 50);
    }

    @Test
    void auto_switches_to_async_under_database_pressure_and_back_when_it_ends() throws Exception {
        long sale = api.createSale(2_000, 1);
        // AUTO starts from the lowest p95 each path showed lately: measure both, healthy, first. Each runs
        // for longer than the latency window (2 s), so that a window holds only warm purchases: ten cold
        // ones made SYNC's p95 1.5 times ASYNC's on CI, and AUTO rightly started in ASYNC.
        for (String forced : List.of("SYNC", "ASYNC")) {
            api.setMode(forced);
            long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            for (int i = 0; System.nanoTime() < until; i++) {
                assertThat(api.purchase(sale, "healthy-" + forced + "-" + sale + "-" + i, 1)
                                .status())
                        .isIn(201, 202);
                Thread.sleep(10);
            }
        }
        Thread.sleep(500); // the sampler's next look (every 200 ms) takes both paths' p95
        api.setMode("AUTO");
        assertThat(api.get("/api/v1/admin/mode", Tokens.admin()).text("effective"))
                .isEqualTo("SYNC");
        List<Api.Response> responses;
        try (Connection blocker = lockStock(sale)) {
            CompletableFuture<List<Api.Response>> crowd = CompletableFuture.supplyAsync(() -> {
                try {
                    List<Api.Response> all = new java.util.ArrayList<>();
                    for (int wave = 0; wave < 20; wave++) {
                        int offset = wave * 20;
                        all.addAll(
                                Api.concurrently(20, i -> api.purchase(sale, "crowd-" + sale + "-" + (offset + i), 1)));
                    }
                    return all;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> api.get("/api/v1/admin/mode", Tokens.admin()).text("effective"), "ASYNC"::equals);
            responses = crowd.get();
            blocker.rollback();
        }
        Api.Response mode = api.get("/api/v1/admin/mode", Tokens.admin());
        assertThat(mode.body().path("lastSwitch").path("to").asString()).isEqualTo("ASYNC");
        // Either the breaker or the commit timeout failed SYNC, or the locked rows slowed its answers past ASYNC's
        // first, which the model reads as "ASYNC answers faster" or, once the slow answers also cap SYNC's
        // door, as "ASYNC carries more": all are the database pressure, and which the model sees first
        // depends on the box's speed. Short of a failure, the reason's estimates show SYNC the slower.
        String reason = mode.body().path("lastSwitch").path("reason").asString();
        if (!reason.contains("SYNC failing")) {
            Matcher answers = ANSWERS.matcher(reason);
            assertThat(answers.find()).as(reason).isTrue();
            assertThat(Double.parseDouble(answers.group(1)))
                    .as(reason)
                    .isGreaterThan(Double.parseDouble(answers.group(2)));
        }
        assertThat(responses.stream().filter(r -> r.status() == 202)).isNotEmpty();
        assertThat(responses).allSatisfy(r -> assertThat(r.status()).isIn(201, 202, 503));

        // A lull is no evidence that SYNC recovered: a trickle of purchases (1/s, well under half the
        // crowd's rate or the 5/s floor) lets AUTO probe it, one per probe-interval.
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofSeconds(1))
                .until(
                        () -> {
                            api.purchase(sale, "trickle-" + sale + "-" + System.nanoTime(), 1);
                            return api.get("/api/v1/admin/mode", Tokens.admin()).text("effective");
                        },
                        "SYNC"::equals);
        // The database breaker opened during the crowd; once it lets trial calls through, sync answers again.
        await().atMost(Duration.ofSeconds(15))
                .until(
                        () -> api.purchase(sale, "after-crowd-" + sale + "-" + System.nanoTime(), 1)
                                .status(),
                        status -> status == 201);
        assertBalancedWith(sale, 2_000);
    }

    @Test
    void a_dead_broker_means_503_under_forced_async_and_the_sync_path_under_auto() throws Exception {
        rabbitAdmin.deleteExchange(TestTopology.properties().get("app.messaging.exchange"));
        api.setMode("ASYNC");
        long sale = api.createSale(20, 1);

        for (int i = 0; i < 8; i++) {
            Api.Response response = api.purchase(sale, "unlucky-" + sale + "-" + i, 1);
            assertThat(response.status()).isEqualTo(503);
            assertThat(response.code()).isEqualTo("UNAVAILABLE");
            assertThat(response.header("Retry-After")).isPresent();
        }
        assertThat(redisRemaining(sale)).isEqualTo(20);
        assertThat(breakers.circuitBreaker("broker").getState()).isEqualTo(CircuitBreaker.State.OPEN);

        api.setMode("AUTO");
        Api.Response diverted = api.purchase(sale, "lucky-" + sale, 1, "Prefer", "respond-async");
        assertThat(diverted.status()).isEqualTo(201);
        assertThat(diverted.text("mode")).isEqualTo("SYNC");
        assertThat(diverted.text("status")).isEqualTo("CONFIRMED");
        assertThat(redisRemaining(sale)).isEqualTo(19);
        assertBalancedWith(sale, 20);
    }

    @Test
    void prefer_respond_async_is_honoured_under_auto_and_ignored_under_forced_sync() {
        long sale = api.createSale(20, 1);
        api.setMode("AUTO");
        Api.Response async = api.purchase(sale, "prefers-async-" + sale, 1, "Prefer", "respond-async");
        assertThat(async.status()).isEqualTo(202);
        assertThat(async.header("Preference-Applied")).hasValue("respond-async");

        api.setMode("SYNC");
        Api.Response sync = api.purchase(sale, "forced-sync-" + sale, 1, "Prefer", "respond-async");
        assertThat(sync.status()).isEqualTo(201);
        assertThat(sync.header("Preference-Applied")).isEmpty();

        api.setMode("ASYNC");
        Api.Response waited = api.purchase(sale, "waits-" + sale, 1, "Prefer", "wait=1");
        assertThat(waited.status()).isEqualTo(202);
        assertThat(waited.header("Preference-Applied")).hasValue("wait=1");
        assertBalancedWith(sale, 20);
    }
}
