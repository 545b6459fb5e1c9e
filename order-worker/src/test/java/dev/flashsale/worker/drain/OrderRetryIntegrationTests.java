package dev.flashsale.worker.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.worker.FailingWrites;
import dev.flashsale.worker.OrderMessages;
import dev.flashsale.worker.WorkerIntegrationTest;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.test.context.TestPropertySource;

/** Orders Postgres keeps failing on: retried after a delay, then FAILED, released and dead-lettered. */
@TestPropertySource(properties = {"app.worker.max-attempts=2", "app.messaging.retry-delay=200ms"})
@Import(FailingWrites.Store.class)
class OrderRetryIntegrationTests extends WorkerIntegrationTest {

    @Autowired
    FailingWrites store;

    @Autowired
    MeterRegistry metrics;

    @AfterEach
    void heal() {
        store.heal();
    }

    @Test
    void retries_a_transient_failure_after_a_delay_then_fails_the_order_and_dead_letters_it() {
        store.failWith(new TransientDataAccessResourceException("connection reset"));
        double retriesBefore = retries();
        OrderRequested order = shop.order(shop.openSale(10, 2), "unlucky");

        Message deadLetter = deadLetterOf(order);

        assertThat((Object) deadLetter.getMessageProperties().getHeader(OrderMessages.ATTEMPT_HEADER))
                .isEqualTo(2);
        assertThat(retries() - retriesBefore).isEqualTo(1);
        assertThat(store.failedWrites()).isGreaterThanOrEqualTo(2);
        assertFailedAndReleased(order, DrainBatch.RETRIES_EXHAUSTED);
    }

    /** Defect 2: the batch found Postgres unreachable; it came back before the retries ran out. */
    @Test
    void records_and_releases_an_exhausted_order_even_after_its_batch_found_postgres_unreachable() {
        store.failWith(new DataAccessResourceFailureException("connection refused"));
        OrderRequested order = shop.order(shop.openSale(10, 2), "outlasted");

        deadLetterOf(order);

        assertFailedAndReleased(order, DrainBatch.RETRIES_EXHAUSTED);
    }

    @Test
    void fails_an_order_that_cannot_be_written_without_retrying_it() {
        store.failWith(new DataIntegrityViolationException("violates check constraint"));
        double retriesBefore = retries();
        OrderRequested order = shop.order(shop.openSale(10, 2), "unwritable");

        deadLetterOf(order);

        assertThat(retries() - retriesBefore).isZero();
        assertFailedAndReleased(order, DrainBatch.WRITE_FAILED);
    }

    private void assertFailedAndReleased(OrderRequested order, String code) {
        StoredOrder stored = lookup.find(order.orderId()).orElseThrow();
        assertThat(stored.status()).isEqualTo(OrderStatus.FAILED);
        assertThat(stored.failureCode()).isEqualTo(code);
        Reservation reservation = ledger.find(order.saleId(), order.orderId()).orElseThrow();
        assertThat(reservation.state()).isEqualTo(ReservationState.FAILED);
        assertThat(reservation.code()).isEqualTo(code);
        assertThat(shop.redisCounters(order.saleId())).isEqualTo(new SaleCounters(10, 10, 0));
        assertThat(shop.redisUnits(order.saleId(), order.userId())).isZero();
        assertThat(shop.postgresStock(order.saleId())).isEqualTo(10);
    }

    /** The order's message, once it reached the dead-letter queue. */
    private Message deadLetterOf(OrderRequested order) {
        Message deadLetter = await().atMost(Duration.ofSeconds(20)).until(shop::deadLetter, Objects::nonNull);
        assertThat(deadLetter.getMessageProperties().getMessageId())
                .isEqualTo(order.orderId().toString());
        return deadLetter;
    }

    private double retries() {
        return metrics.get("flashsale.worker.retries").counter().count();
    }
}
