package dev.flashsale.api.warmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.f4b6a3.uuid.UuidCreator;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.TestTopology;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.test.context.TestPropertySource;

/**
 * The warm-up on: it runs before the instance is ready (the readiness probe, polled from the moment Tomcat
 * listens, answers 503 until the warm-up has finished), and it leaves nothing behind in Postgres, Redis or
 * the broker.
 */
@Tag("redis-cluster")
@TestPropertySource(
        properties = {
            "app.warmup.enabled=true",
            "app.warmup.requests=200",
            "app.warmup.rounds=20",
            "app.warmup.concurrency=4",
            // Far above what the rehearsals need even on a loaded box: the exact counts below assume no share ran out.
            "app.warmup.budget=600s"
        })
@Import(WarmupIntegrationTests.ReadinessWatch.class)
class WarmupIntegrationTests extends ApiIntegrationTest {

    private static final Instant JVM_STARTED =
            Instant.ofEpochMilli(ManagementFactory.getRuntimeMXBean().getStartTime());

    @Autowired
    Warmup warmup;

    @Autowired
    ReadinessWatch watch;

    @Autowired
    AmqpAdmin broker;

    @Test
    void runs_every_rehearsal_before_the_instance_reports_ready() {
        WarmupReport report = Objects.requireNonNull(warmup.report());

        assertThat(report.failure()).isEmpty();
        // Requests i % 4 == 2 fail validation (400); the others ask for a sale or an order that does not exist.
        assertThat(report.answers()).isEqualTo(Map.of(400, 50, 404, 150));
        // The crowd in the line: the first places cover the units and reach the purchase path, which finds no such
        // sale in Postgres; every other shopper is told to wait (503 with a place) and asks once more with it.
        assertThat(report.lineAnswers())
                .isEqualTo(Map.of(404, Rehearsals.LINE_UNITS, 503, 2 * (200 - Rehearsals.LINE_UNITS)));
        // Per round: loadSale, 10 reservations, then marking them PUBLISHED (index and advance, one pipeline), settle,
        // release, find and counters (find and counters plain reads, counted with the round's calls).
        assertThat(report.scriptCalls()).isEqualTo(20 * (1 + Rehearsals.BATCH + 5));
        assertThat(report.rolledBack()).isEqualTo(20);
        assertThat(report.confirmed()).isEqualTo(20);

        // Each poll notes, once answered, whether the warm-up had finished: one still running then was running
        // when the instance answered, so it must have answered 503.
        assertThat(watch.polls)
                .filteredOn(poll -> !poll.warmupDone())
                .as("readiness polls answered while warming up")
                .hasSizeGreaterThan(3)
                .allSatisfy(poll -> assertThat(poll.status()).isEqualTo(503));
        // The context (and so this test) may start before the watch's next poll sees the readiness it reports.
        await().atMost(Duration.ofSeconds(30)).until(() -> watch.polls.stream().anyMatch(poll -> poll.status() == 200));
        assertThat(watch.polls)
                .filteredOn(poll -> poll.status() == 200)
                .isNotEmpty()
                .allSatisfy(poll -> assertThat(poll.warmupDone()).isTrue());
        assertThat(watch.readiness)
                .as("readiness changes, and whether the warm-up had finished by then")
                .containsExactly(new ReadinessWatch.Change(ReadinessState.ACCEPTING_TRAFFIC, true));
    }

    @Test
    void leaves_no_sale_stock_order_key_or_message_behind() {
        WarmupReport report = Objects.requireNonNull(warmup.report());
        // The throw-away sale, the ids below it that the parallel rolled-back transactions used, and the line's.
        long lowest = report.saleId() - Warmup.LINE_SALE_BELOW;

        assertThat(count("select count(*) from sale where id >= :low", lowest)).isZero();
        assertThat(count("select count(*) from sale_stock where sale_id >= :low", lowest))
                .isZero();
        assertThat(count("select count(*) from purchase_order where sale_id >= :low", lowest))
                .isZero();
        // Only the orders created since this JVM started (ids are UUIDv7, so the primary key bounds them): on
        // a box whose drills left millions of orders, a scan of them all outlasts the query timeout.
        assertThat(jdbc.sql("select count(*) from purchase_order where id >= :since and user_id like :prefix")
                        .param("since", UuidCreator.getTimeOrderedEpochMin(JVM_STARTED))
                        .param("prefix", report.shopperPrefix() + "%")
                        .query(Long.class)
                        .single())
                .isZero();

        for (long sale = lowest; sale <= report.saleId(); sale++) {
            assertThat(keys("{sale:" + sale + "}*")).as("keys of sale %d", sale).isEmpty();
        }
        assertThat(keys("*" + report.shopperPrefix() + "*"))
                .as("throttle counters")
                .isEmpty();
        List<String> indexed = new ArrayList<>();
        for (String key : keys("order:*")) {
            if (Long.toString(report.saleId()).equals(redis.opsForValue().get(key))) {
                indexed.add(key);
            }
        }
        assertThat(indexed).as("order index entries of the throw-away sale").isEmpty();

        for (String queue : Set.of(
                TestTopology.queue(),
                TestTopology.properties().get("app.messaging.retry-queue"),
                TestTopology.properties().get("app.messaging.dead-letter-queue"))) {
            QueueInformation info = broker.getQueueInfo(queue);
            assertThat(info).as("queue %s", queue).isNotNull();
            assertThat(info.getMessageCount()).as("messages in %s", queue).isZero();
        }
    }

    private long count(String sql, long low) {
        return jdbc.sql(sql).param("low", low).query(Long.class).single();
    }

    private List<String> keys(String pattern) {
        List<String> found = new ArrayList<>();
        try (Cursor<String> cursor =
                redis.scan(ScanOptions.scanOptions().match(pattern).count(1000).build())) {
            cursor.forEachRemaining(found::add);
        }
        return found;
    }

    /**
     * Polls the readiness probe from the moment the web server listens until it answers 200, noting after each
     * answer whether the warm-up had finished; and records the readiness state changes.
     */
    @TestConfiguration(proxyBeanMethods = false)
    static class ReadinessWatch {

        record Poll(int status, boolean warmupDone) {}

        record Change(ReadinessState state, boolean warmupDone) {}

        final List<Poll> polls = new CopyOnWriteArrayList<>();
        final List<Change> readiness = new CopyOnWriteArrayList<>();
        private final ObjectProvider<Warmup> warmup;

        ReadinessWatch(ObjectProvider<Warmup> warmup) {
            this.warmup = warmup;
        }

        @EventListener
        void listening(WebServerInitializedEvent event) {
            Thread.ofPlatform().daemon().start(() -> poll(event.getWebServer().getPort()));
        }

        @EventListener
        void changed(AvailabilityChangeEvent<ReadinessState> event) {
            readiness.add(new Change(event.getState(), done()));
        }

        private boolean done() {
            Warmup bean = warmup.getIfAvailable();
            return bean != null && bean.report() != null;
        }

        private void poll(int port) {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest probe = HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness"))
                    .timeout(Duration.ofSeconds(5))
                    .build();
            long until = System.nanoTime() + Duration.ofMinutes(3).toNanos();
            while (System.nanoTime() < until) {
                try {
                    int status = http.send(probe, HttpResponse.BodyHandlers.discarding())
                            .statusCode();
                    polls.add(new Poll(status, done()));
                    if (status == 200) {
                        return;
                    }
                    Thread.sleep(25);
                } catch (InterruptedException e) {
                    return;
                } catch (java.io.IOException e) {
                    // not listening yet
                }
            }
        }
    }
}
