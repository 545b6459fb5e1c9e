package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.SaleLines;
import dev.flashsale.common.stock.StockLedger;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Issue 38, finding 6: an Idempotency-Key whose Redis binding is gone (its TTL ran out while the sale is
 * open, a failover promoted a replica that had not got it) while its order exists. The replay must get the
 * original order from Postgres, not buy anew: before, it was refused (409), refused as a different
 * purchase (422), or told 202 for a second order that Postgres would reject. Only this test's own binding
 * key is deleted. No worker runs here: an ASYNC order is written as a worker writes it.
 */
@Tag("redis-cluster")
class LostBindingIntegrationTests extends ApiIntegrationTest {

    @Autowired
    OrderStore orders;

    @Autowired
    StockLedger ledger;

    @Autowired
    TransactionTemplate transactions;

    @Autowired
    SaleLines lines;

    @AfterEach
    void syncMode() {
        api.setMode("SYNC");
    }

    /** A purchase of one unit with the shopper's Idempotency-Key: the original, or a replay of it. */
    private Api.Response keyed(long sale, String user, String key) {
        return api.purchase(sale, user, 1, "Idempotency-Key", key);
    }

    private void loseBinding(String user, String key) {
        assertThat(redis.delete(IdempotencyKeys.redisKey(user, key))).isTrue();
    }

    /** What a worker does with an accepted ASYNC order: writes it to Postgres, then settles Redis. */
    private void writtenByAWorker(long sale, String user, String key, Api.Response accepted) {
        OrderRequested order = new OrderRequested(
                UUID.fromString(accepted.text("orderId")),
                sale,
                user,
                1,
                Instant.parse(accepted.text("createdAt")),
                key,
                IdempotencyKeys.fingerprint(sale, 1));
        transactions.executeWithoutResult(status -> orders.placeAll(List.of(order), PurchasePath.ASYNC));
        ledger.settle(sale, order.orderId(), OrderStatus.CONFIRMED, "");
    }

    @Test
    void a_replay_behind_a_full_line_gets_its_order_not_a_place() {
        api.setMode("SYNC");
        long sale = api.createSale(5, 1);
        String user = "lost-line-" + sale;
        String key = "k-" + sale;
        Api.Response original = keyed(sale, user, key);
        assertThat(original.status()).as(original.toString()).isEqualTo(201);
        lines.join(sale, 10, Duration.ofSeconds(5), null); // shoppers who have not come yet hold the places left
        loseBinding(user, key);

        Api.Response replay = keyed(sale, user, key);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(original.text("orderId"));
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(4);
    }

    @Test
    void a_sync_replay_at_the_limit_gets_its_order_not_a_refusal() {
        api.setMode("SYNC");
        long sale = api.createSale(5, 1);
        String user = "lost-sync-" + sale;
        String key = "k-" + sale;
        Api.Response original = keyed(sale, user, key);
        assertThat(original.status()).as(original.toString()).isEqualTo(201);
        loseBinding(user, key);

        Api.Response replay = keyed(sale, user, key);
        Api.Response again = keyed(sale, user, key);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(original.text("orderId"));
        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(again.text("orderId")).as("the binding is back").isEqualTo(original.text("orderId"));
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
    }

    @Test
    void a_sync_replay_below_the_limit_gets_its_order_not_a_second_one() {
        api.setMode("SYNC");
        long sale = api.createSale(5, 2);
        String user = "lost-sync-two-" + sale;
        String key = "k-" + sale;
        Api.Response original = keyed(sale, user, key);
        assertThat(original.status()).as(original.toString()).isEqualTo(201);
        loseBinding(user, key);

        Api.Response replay = keyed(sale, user, key);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(original.text("orderId"));
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale))
                .as("the units the replay reserved are given back")
                .isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
    }

    @Test
    void an_async_replay_at_the_limit_gets_its_order_not_a_refusal() {
        api.setMode("ASYNC");
        long sale = api.createSale(5, 1);
        String user = "lost-async-" + sale;
        String key = "k-" + sale;
        Api.Response accepted = keyed(sale, user, key);
        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        writtenByAWorker(sale, user, key, accepted);
        loseBinding(user, key);

        Api.Response replay = keyed(sale, user, key);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(202);
        assertThat(replay.text("orderId")).isEqualTo(accepted.text("orderId"));
        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
    }

    @Test
    void an_async_replay_below_the_limit_gets_its_order_not_a_202_for_a_second_one() {
        api.setMode("ASYNC");
        long sale = api.createSale(5, 2);
        String user = "lost-async-two-" + sale;
        String key = "k-" + sale;
        Api.Response accepted = keyed(sale, user, key);
        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        writtenByAWorker(sale, user, key, accepted);
        loseBinding(user, key);

        Api.Response replay = keyed(sale, user, key);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(202);
        assertThat(replay.text("orderId")).isEqualTo(accepted.text("orderId"));
        assertThat(redisRemaining(sale))
                .as("the units the replay reserved are given back")
                .isEqualTo(4);
    }
}
