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
    private void writtenByAWorker(KeyedPurchase accepted) {
        long sale = accepted.sale();
        OrderRequested order = new OrderRequested(
                UUID.fromString(accepted.orderId()),
                sale,
                accepted.user(),
                1,
                Instant.parse(accepted.original().text("createdAt")),
                accepted.key(),
                IdempotencyKeys.fingerprint(sale, 1));
        transactions.executeWithoutResult(status -> orders.placeAll(List.of(order), PurchasePath.ASYNC));
        ledger.settle(sale, order.orderId(), OrderStatus.CONFIRMED, "");
    }

    /** A shopper's keyed purchase in a new sale of five units, and the answer it got. */
    private record KeyedPurchase(long sale, String user, String key, Api.Response original) {
        String orderId() {
            return original.text("orderId");
        }
    }

    /** In {@code mode}, a shopper buys one unit of a new sale with an Idempotency-Key: answered {@code status}. */
    private KeyedPurchase purchased(String mode, int perUserLimit, String shopper, int status) {
        api.setMode(mode);
        long sale = api.createSale(5, perUserLimit);
        String user = shopper + "-" + sale;
        String key = "k-" + sale;
        Api.Response original = keyed(sale, user, key);
        assertThat(original.status()).as(original.toString()).isEqualTo(status);
        return new KeyedPurchase(sale, user, key, original);
    }

    /** Loses the key's binding, then replays the purchase: the original order, answered {@code status}. */
    private Api.Response replayedWithoutItsBinding(KeyedPurchase purchase, int status) {
        loseBinding(purchase.user(), purchase.key());
        Api.Response replay = keyed(purchase.sale(), purchase.user(), purchase.key());
        assertThat(replay.status()).as(replay.toString()).isEqualTo(status);
        assertThat(replay.text("orderId")).isEqualTo(purchase.orderId());
        return replay;
    }

    @Test
    void a_replay_behind_a_full_line_gets_its_order_not_a_place() {
        KeyedPurchase purchase = purchased("SYNC", 1, "lost-line", 201);
        long sale = purchase.sale();
        lines.join(sale, 10, Duration.ofSeconds(5), null); // shoppers who have not come yet hold the places left

        replayedWithoutItsBinding(purchase, 201);

        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(4);
    }

    @Test
    void a_sync_replay_at_the_limit_gets_its_order_not_a_refusal() {
        KeyedPurchase purchase = purchased("SYNC", 1, "lost-sync", 201);
        long sale = purchase.sale();

        Api.Response replay = replayedWithoutItsBinding(purchase, 201);
        Api.Response again = keyed(sale, purchase.user(), purchase.key());

        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(again.text("orderId")).as("the binding is back").isEqualTo(purchase.orderId());
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
    }

    @Test
    void a_sync_replay_below_the_limit_gets_its_order_not_a_second_one() {
        KeyedPurchase purchase = purchased("SYNC", 2, "lost-sync-two", 201);
        long sale = purchase.sale();

        replayedWithoutItsBinding(purchase, 201);

        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale))
                .as("the units the replay reserved are given back")
                .isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
    }

    @Test
    void an_async_replay_at_the_limit_gets_its_order_not_a_refusal() {
        KeyedPurchase purchase = purchased("ASYNC", 1, "lost-async", 202);
        writtenByAWorker(purchase);

        Api.Response replay = replayedWithoutItsBinding(purchase, 202);

        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(redisRemaining(purchase.sale())).isEqualTo(4);
    }

    @Test
    void an_async_replay_below_the_limit_gets_its_order_not_a_202_for_a_second_one() {
        KeyedPurchase purchase = purchased("ASYNC", 2, "lost-async-two", 202);
        writtenByAWorker(purchase);

        replayedWithoutItsBinding(purchase, 202);

        assertThat(redisRemaining(purchase.sale()))
                .as("the units the replay reserved are given back")
                .isEqualTo(4);
    }
}
