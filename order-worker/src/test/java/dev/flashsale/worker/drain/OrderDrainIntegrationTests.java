package dev.flashsale.worker.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.OrderWorkerApplication;
import dev.flashsale.worker.WorkerIntegrationTest;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.util.ReflectionTestUtils;

/** The worker against the real Postgres, Redis and RabbitMQ, on a queue topology of its own. */
// Small prefetch and batches, so that several consumers (and a second worker) share the messages.
@TestPropertySource(
        properties = {"spring.rabbitmq.listener.simple.prefetch=10", "spring.rabbitmq.listener.simple.batch-size=10"})
class OrderDrainIntegrationTests extends WorkerIntegrationTest {

    private static final Duration DRAINED = Duration.ofSeconds(30);

    @Autowired
    MessagingProperties names;

    @Autowired
    MeterRegistry metrics;

    @Autowired
    RabbitListenerEndpointRegistry listeners;

    @LocalServerPort
    int port;

    @Test
    void drains_a_backlog_of_published_orders_in_batches_and_ends_their_holds() {
        long saleId = shop.openSale(100, 1);
        long batchesBefore = batchWrites();
        MessageListenerContainer listener = listeners.getListenerContainer("order-drain");
        listener.stop();
        List<OrderRequested> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(shop.order(saleId, "user-" + i));
        }
        listener.start();

        await().atMost(DRAINED)
                .untilAsserted(
                        () -> assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, 100L)));

        assertThat(shop.postgresStock(saleId)).isZero();
        await().atMost(DRAINED)
                .untilAsserted(() -> assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(100, 0, 0)));
        assertThat(orders)
                .allSatisfy(order -> assertThat(shop.reservationState(order)).isEqualTo(ReservationState.CONFIRMED));
        // Batches of up to 10 (the test's batch size), one transaction each; not one per message.
        assertThat(batchWrites() - batchesBefore).isBetween(10L, 50L);
    }

    @Test
    void writes_each_order_once_when_every_message_arrives_twice_at_two_workers() {
        double confirmedBefore = orders("confirmed");
        double duplicatesBefore = orders("duplicate");
        try (ConfigurableApplicationContext secondWorker = startSecondWorker()) {
            MeterRegistry secondMetrics = secondWorker.getBean(MeterRegistry.class);
            long saleId = shop.openSale(60, 1);
            List<OrderRequested> orders = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                OrderRequested order = shop.order(saleId, "user-" + i);
                shop.publish(order);
                orders.add(order);
            }

            await().atMost(DRAINED)
                    .untilAsserted(() -> assertThat(orders("confirmed")
                                    - confirmedBefore
                                    + orders(secondMetrics, "confirmed")
                                    + orders("duplicate")
                                    - duplicatesBefore
                                    + orders(secondMetrics, "duplicate"))
                            .isEqualTo(120));

            assertThat(shop.orderCount(saleId)).isEqualTo(60);
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, 60L));
            assertThat(shop.postgresStock(saleId)).isZero();
            assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(60, 0, 0));
            // Each order was written by exactly one of the two workers; the other copy found it there.
            assertThat(orders("confirmed") - confirmedBefore + orders(secondMetrics, "confirmed"))
                    .isEqualTo(60);
            assertThat(orders("duplicate") - duplicatesBefore + orders(secondMetrics, "duplicate"))
                    .isEqualTo(60);
            assertThat(orders(secondMetrics, "confirmed") + orders(secondMetrics, "duplicate"))
                    .as("the second worker took part")
                    .isPositive();
            assertThat(orders)
                    .allSatisfy(
                            order -> assertThat(shop.reservationState(order)).isEqualTo(ReservationState.CONFIRMED));
        }
    }

    @Test
    void sends_an_undecodable_message_to_the_dead_letter_queue_and_goes_on_with_the_next() {
        double poisonBefore = deadLettered("poison");
        byte[] notJson = "not json".getBytes(StandardCharsets.UTF_8);
        byte[] missingFields =
                "{\"orderId\":\"%s\",\"saleId\":1}".formatted(UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
        shop.publishRaw(notJson, "poison-1");
        shop.publishRaw(missingFields, "poison-2");
        long saleId = shop.openSale(3, 1);
        List<OrderRequested> orders =
                List.of(shop.order(saleId, "alice"), shop.order(saleId, "bob"), shop.order(saleId, "carol"));

        List<byte[]> deadLetters = new ArrayList<>();
        await().atMost(DRAINED).until(() -> {
            Message deadLetter = shop.deadLetter();
            if (deadLetter != null) {
                deadLetters.add(deadLetter.getBody());
            }
            return deadLetters.size() == 2;
        });
        assertThat(deadLetters).containsExactlyInAnyOrder(notJson, missingFields);
        assertThat(deadLettered("poison") - poisonBefore).isEqualTo(2);
        await().atMost(DRAINED).untilAsserted(() -> {
            assertThat(shop.ordersByStatus(saleId)).isEqualTo(Map.of(OrderStatus.CONFIRMED, 3L));
            // Redis's hold ends after Postgres's commit.
            assertThat(orders)
                    .allSatisfy(
                            order -> assertThat(shop.reservationState(order)).isEqualTo(ReservationState.CONFIRMED));
        });
    }

    @Test
    void rejects_orders_postgres_has_no_stock_for_and_gives_their_units_back() {
        long saleId = shop.openSale(5, 1);
        shop.setPostgresStock(saleId, 2);
        List<OrderRequested> orders = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            orders.add(shop.order(saleId, "user-" + i));
        }

        await().atMost(DRAINED)
                .untilAsserted(() -> assertThat(shop.ordersByStatus(saleId))
                        .isEqualTo(Map.of(OrderStatus.CONFIRMED, 2L, OrderStatus.REJECTED, 3L)));

        assertThat(shop.postgresStock(saleId)).isZero();
        await().atMost(DRAINED)
                .untilAsserted(() -> assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(5, 3, 0)));
        for (OrderRequested order : orders) {
            StoredOrder stored = lookup.find(order.orderId()).orElseThrow();
            Reservation reservation = ledger.find(saleId, order.orderId()).orElseThrow();
            if (stored.status() == OrderStatus.REJECTED) {
                assertThat(stored.failureCode()).isEqualTo(OrderStore.STOCK_EXHAUSTED);
                assertThat(reservation.state()).isEqualTo(ReservationState.REJECTED);
                assertThat(reservation.code()).isEqualTo(OrderStore.STOCK_EXHAUSTED);
                assertThat(shop.redisUnits(saleId, order.userId())).isZero();
            } else {
                assertThat(reservation.state()).isEqualTo(ReservationState.CONFIRMED);
                assertThat(shop.redisUnits(saleId, order.userId())).isEqualTo(1);
            }
        }
    }

    @Test
    void drains_batch_messages_order_by_order_when_some_are_released_duplicated_or_out_of_stock() {
        double droppedBefore = orders("dropped");
        long saleId = shop.openSale(200, 1);
        List<OrderRequested> orders = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            orders.add(shop.reserve(saleId, "batch-" + i, Instant.now()));
        }
        // The API gave ten of them up (no confirm in time) although the broker has them.
        for (OrderRequested released : orders.subList(0, 10)) {
            ledger.release(
                    saleId,
                    released.orderId(),
                    EnumSet.of(ReservationState.RESERVED),
                    ReservationState.RELEASED,
                    "BROKER_TIMED_OUT");
        }
        // Postgres can take only 120 of the 140 live orders: 20 are refused inside their batches.
        shop.setPostgresStock(saleId, 120);
        for (int from = 0; from < 150; from += 50) {
            shop.publishBatch(orders.subList(from, from + 50));
        }
        // A redelivered copy of part of a batch, as after a worker crash between commit and ack.
        shop.publishBatch(orders.subList(5, 35));

        await().atMost(DRAINED)
                .untilAsserted(() -> assertThat(shop.ordersByStatus(saleId))
                        .isEqualTo(Map.of(OrderStatus.CONFIRMED, 120L, OrderStatus.REJECTED, 20L)));
        await().atMost(DRAINED)
                .untilAsserted(() -> assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(200, 80, 0)));
        assertThat(shop.postgresStock(saleId)).isZero();
        assertThat(shop.orderCount(saleId)).isEqualTo(140);
        assertThat(orders("dropped") - droppedBefore).isGreaterThanOrEqualTo(10);
        for (OrderRequested order : orders.subList(0, 10)) {
            assertThat(lookup.find(order.orderId())).isEmpty();
            assertThat(shop.reservationState(order)).isEqualTo(ReservationState.RELEASED);
        }
        for (OrderRequested order : orders.subList(10, 150)) {
            StoredOrder stored = lookup.find(order.orderId()).orElseThrow();
            assertThat(shop.reservationState(order).orderStatus()).isEqualTo(stored.status());
            assertThat(shop.redisUnits(saleId, order.userId()))
                    .isEqualTo(stored.status() == OrderStatus.CONFIRMED ? 1 : 0);
        }
    }

    @Test
    void drops_a_message_whose_reservation_the_api_released() {
        double droppedBefore = orders("dropped");
        long saleId = shop.openSale(10, 1);
        OrderRequested order = shop.reserve(saleId, "late-confirm", Instant.now());
        // The API's confirm timed out: it released the reservation and answered 503, yet the broker has it.
        assertThat(ledger.release(
                                saleId,
                                order.orderId(),
                                EnumSet.of(ReservationState.RESERVED),
                                ReservationState.RELEASED,
                                "PUBLISH_TIMEOUT")
                        .changed())
                .isTrue();
        shop.publish(order);

        await().atMost(DRAINED).until(() -> orders("dropped") > droppedBefore);

        assertThat(lookup.find(order.orderId())).isEmpty();
        assertThat(shop.postgresStock(saleId)).isEqualTo(10);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 10, 0));
        assertThat(shop.reservationState(order)).isEqualTo(ReservationState.RELEASED);
    }

    @Test
    void listens_in_batches_with_manual_acks_and_a_shutdown_timeout_that_lets_a_batch_finish() {
        SimpleMessageListenerContainer listener =
                (SimpleMessageListenerContainer) listeners.getListenerContainer("order-drain");

        assertThat(listener.isConsumerBatchEnabled()).isTrue();
        assertThat(listener.getAcknowledgeMode()).isEqualTo(AcknowledgeMode.MANUAL);
        assertThat(ReflectionTestUtils.getField(listener, "receiveTimeout")).isEqualTo(50L);
        assertThat(ReflectionTestUtils.getField(listener, "batchReceiveTimeout"))
                .isEqualTo(100L);
        assertThat(ReflectionTestUtils.getField(listener, "shutdownTimeout")).isEqualTo(25_000L);
    }

    @Test
    void reports_liveness_readiness_and_prometheus_metrics() throws Exception {
        HttpClient http = HttpClient.newHttpClient();

        HttpResponse<String> liveness = get(http, "/actuator/health/liveness");
        HttpResponse<String> readiness = get(http, "/actuator/health/readiness");
        HttpResponse<String> prometheus = get(http, "/actuator/prometheus");

        assertThat(liveness.statusCode()).isEqualTo(200);
        assertThat(readiness.statusCode()).isEqualTo(200);
        assertThat(readiness.body()).contains("\"status\":\"UP\"");
        assertThat(prometheus.statusCode()).isEqualTo(200);
        assertThat(prometheus.body())
                .contains("flashsale_worker_orders_total{", "outcome=\"confirmed\"")
                .contains("flashsale_worker_dead_lettered_total{")
                .contains("flashsale_worker_batch_write_seconds");
    }

    private HttpResponse<String> get(HttpClient http, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A second worker process, in effect: its own context and connections, on the same queue. */
    private ConfigurableApplicationContext startSecondWorker() {
        return new SpringApplicationBuilder(OrderWorkerApplication.class)
                .web(WebApplicationType.NONE)
                .run(
                        "--app.messaging.exchange=" + names.exchange(),
                        "--app.messaging.queue=" + names.queue(),
                        "--app.messaging.retry-exchange=" + names.retryExchange(),
                        "--app.messaging.retry-queue=" + names.retryQueue(),
                        "--app.messaging.dead-letter-exchange=" + names.deadLetterExchange(),
                        "--app.messaging.dead-letter-queue=" + names.deadLetterQueue(),
                        "--spring.rabbitmq.listener.simple.prefetch=10",
                        "--spring.rabbitmq.listener.simple.batch-size=10",
                        "--app.reconciler.interval=1h");
    }

    private double orders(String outcome) {
        return orders(metrics, outcome);
    }

    private static double orders(MeterRegistry registry, String outcome) {
        return registry.get("flashsale.worker.orders")
                .tag("outcome", outcome)
                .counter()
                .count();
    }

    private long batchWrites() {
        return metrics.get("flashsale.worker.batch.write").timer().count();
    }

    private double deadLettered(String reason) {
        return metrics.get("flashsale.worker.dead.lettered")
                .tag("reason", reason)
                .counter()
                .count();
    }
}
