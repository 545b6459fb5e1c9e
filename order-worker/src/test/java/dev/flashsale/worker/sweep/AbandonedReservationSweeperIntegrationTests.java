package dev.flashsale.worker.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.worker.IsolatedTopology;
import dev.flashsale.worker.Shop;
import dev.flashsale.worker.WorkerIntegrationTest;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Reservations the API never handed off. Each test sweeps its own sale (the scheduled sweep would sweep
 * every sale in the shared database); reservations are made in the past instead of waiting out the grace.
 */
@WorkerIntegrationTest
@TestPropertySource(properties = "app.sweeper.grace=2s")
class AbandonedReservationSweeperIntegrationTests {

    @DynamicPropertySource
    static void isolate(DynamicPropertyRegistry registry) {
        IsolatedTopology.register(registry);
    }

    @Autowired
    AbandonedReservationSweeper sweeper;

    @Autowired
    Shop shop;

    @Autowired
    StockLedger ledger;

    @Autowired
    OrderStore store;

    @Autowired
    TransactionTemplate transactions;

    @Test
    void releases_a_stale_reservation_postgres_never_heard_of() {
        long saleId = shop.openSale(10, 1);
        OrderRequested abandoned = shop.reserve(saleId, "gone", Instant.now().minusSeconds(30));
        OrderRequested fresh = shop.reserve(saleId, "still-publishing", Instant.now());

        AbandonedReservationSweeper.Sweep sweep = sweeper.sweep(saleId, Instant.now());

        assertThat(sweep).isEqualTo(new AbandonedReservationSweeper.Sweep(1, 0));
        Reservation released = ledger.find(saleId, abandoned.orderId()).orElseThrow();
        assertThat(released.state()).isEqualTo(ReservationState.RELEASED);
        assertThat(released.code()).isEqualTo(AbandonedReservationSweeper.ABANDONED);
        assertThat(ledger.unitsOf(saleId, "gone")).isZero();
        assertThat(shop.reservationState(fresh)).isEqualTo(ReservationState.RESERVED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 1));
        assertThat(store.find(abandoned.orderId())).isEmpty();
    }

    @Test
    void settles_a_stale_reservation_to_the_order_postgres_holds() {
        long saleId = shop.openSale(10, 1);
        OrderRequested written = shop.reserve(saleId, "written", Instant.now().minusSeconds(30));
        transactions.executeWithoutResult(status -> store.place(written, PurchaseMode.ASYNC));

        AbandonedReservationSweeper.Sweep sweep = sweeper.sweep(saleId, Instant.now());

        assertThat(sweep).isEqualTo(new AbandonedReservationSweeper.Sweep(0, 1));
        assertThat(shop.reservationState(written)).isEqualTo(ReservationState.CONFIRMED);
        assertThat(store.find(written.orderId()).orElseThrow().status()).isEqualTo(OrderStatus.CONFIRMED);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 9, 0));
        assertThat(ledger.unitsOf(saleId, "written")).isEqualTo(1);
        assertThat(shop.postgresStock(saleId)).isEqualTo(9);
    }

    @Test
    void changes_nothing_when_swept_twice() {
        long saleId = shop.openSale(10, 1);
        shop.reserve(saleId, "gone", Instant.now().minus(Duration.ofMinutes(1)));

        AbandonedReservationSweeper.Sweep first = sweeper.sweep(saleId, Instant.now());
        AbandonedReservationSweeper.Sweep second = sweeper.sweep(saleId, Instant.now());

        assertThat(first.released()).isEqualTo(1);
        assertThat(second).isEqualTo(AbandonedReservationSweeper.Sweep.NOTHING);
        assertThat(shop.redisCounters(saleId)).isEqualTo(new SaleCounters(10, 10, 0));
    }
}
