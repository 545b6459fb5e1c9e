package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import java.sql.Connection;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * A SYNC write that outlasts the reconciler's grace: the reservation is released as abandoned while the
 * write still waits, then the write commits. A statement may wait 15 s here, so that a row lock stalls a
 * write without cancelling it.
 */
@TestPropertySource(properties = "spring.jdbc.template.query-timeout=15s")
class LateCommitIntegrationTests extends ApiIntegrationTest {

    @Autowired
    DataSource dataSource;

    @Autowired
    StockLedger ledger;

    @BeforeEach
    void syncMode() {
        api.setMode("SYNC");
    }

    /** Issue 27, path 10. */
    @Test
    void a_write_that_commits_after_its_reservation_was_released_takes_its_units_again() throws Exception {
        long sale = api.createSale(5, 1);
        Api.Response answer;
        UUID orderId;
        try (Connection blocker = dataSource.getConnection()) {
            blocker.setAutoCommit(false);
            blocker.createStatement().execute("select * from sale_stock where sale_id = " + sale + " for update");
            CompletableFuture<Api.Response> purchase =
                    CompletableFuture.supplyAsync(() -> api.purchase(sale, "stalled-" + sale, 1));
            orderId = await().atMost(Duration.ofSeconds(10))
                    .until(
                            () -> {
                                Set<String> held = redis.opsForZSet().range("{sale:" + sale + "}:pending", 0, -1);
                                return held == null || held.isEmpty()
                                        ? null
                                        : UUID.fromString(held.iterator().next());
                            },
                            id -> id != null && "WRITING".equals(reservationState(sale, id)));
            // The reconciler after its grace, its probe having found nothing yet.
            assertThat(ledger.release(
                                    sale,
                                    orderId,
                                    EnumSet.of(ReservationState.WRITING),
                                    ReservationState.RELEASED,
                                    "ABANDONED")
                            .changed())
                    .isTrue();
            assertThat(redisRemaining(sale)).isEqualTo(5);
            blocker.commit();
            answer = purchase.get(30, TimeUnit.SECONDS);
        }

        assertThat(answer.status()).as(answer.toString()).isEqualTo(201);
        assertThat(answer.text("orderId")).isEqualTo(orderId.toString());
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(reservationState(sale, orderId)).isEqualTo("CONFIRMED");
        assertThat(redisRemaining(sale)).as("Redis follows Postgres").isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
        assertThat(api.stock(sale).body().path("balanced").asBoolean()).isTrue();
    }
}
