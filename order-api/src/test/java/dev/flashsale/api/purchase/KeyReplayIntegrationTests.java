package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Replays of a key whose original order was given back: the key is never a dead end. */
class KeyReplayIntegrationTests extends ApiIntegrationTest {

    @Autowired
    StockLedger ledger;

    @Autowired
    IdempotencyKeys keys;

    @BeforeEach
    void syncMode() {
        api.setMode("SYNC");
    }

    /**
     * What an API that died between reserve and answer leaves: the key bound to an order whose reservation
     * the reconciler released as abandoned (as it does after its grace).
     */
    private UUID abandonedUnder(long sale, String user, String key) {
        UUID orderId = OrderIds.next();
        assertThat(ledger.reserve(sale, orderId, user, 1, PurchasePath.SYNC, Instant.now(), true))
                .isInstanceOf(ReserveResult.Reserved.class);
        redis.opsForValue()
                .set(
                        IdempotencyKeys.redisKey(user, key),
                        IdempotencyKeys.fingerprint(sale, 1) + "|" + orderId,
                        Duration.ofHours(1));
        assertThat(ledger.release(
                                sale,
                                orderId,
                                EnumSet.of(ReservationState.RESERVED),
                                ReservationState.RELEASED,
                                "ABANDONED")
                        .changed())
                .isTrue();
        return orderId;
    }

    /** Issue 27, path 5. */
    @Test
    void a_replay_of_a_key_whose_order_was_given_back_buys_as_new() {
        long sale = api.createSale(5, 1);
        String user = "abandoned-" + sale;
        UUID abandoned = abandonedUnder(sale, user, "k-" + sale);

        Api.Response replay = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(replay.text("orderId")).isNotEqualTo(abandoned.toString());
        Api.Response again = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        assertThat(again.status()).as(again.toString()).isEqualTo(201);
        assertThat(again.text("orderId")).isEqualTo(replay.text("orderId"));
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
    }

    @Test
    void concurrent_replays_of_a_key_whose_order_was_given_back_make_one_order() throws Exception {
        long sale = api.createSale(5, 1);
        String user = "abandoned-crowd-" + sale;
        abandonedUnder(sale, user, "k-" + sale);

        List<Api.Response> replays =
                Api.concurrently(8, i -> api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale));

        assertThat(replays)
                .allSatisfy(r -> assertThat(r.status()).as(r.toString()).isEqualTo(201));
        assertThat(replays.stream().map(r -> r.text("orderId")).distinct()).hasSize(1);
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
    }

    /**
     * A request that took nothing unbinds its key only while the key is bound to its own order. On one Redis
     * master its reserve call binds the key: a request answered 503 before its call ran (a full path) never
     * bound it, and must not unbind the binding another request with the key made meanwhile.
     */
    @Test
    void a_request_that_took_nothing_unbinds_its_key_only_from_its_own_order() {
        String user = "unbinder-" + System.nanoTime();
        String key = IdempotencyKeys.redisKey(user, "k");
        OrderRequested mine = new OrderRequested(OrderIds.next(), 1, user, 1, Instant.now(), "k", "fp");
        OrderRequested theirs = new OrderRequested(OrderIds.next(), 1, user, 1, Instant.now(), "k", "fp");
        redis.opsForValue().set(key, "fp|" + theirs.orderId(), Duration.ofMinutes(1));

        keys.forget(mine);
        assertThat(redis.opsForValue().get(key)).isEqualTo("fp|" + theirs.orderId());

        keys.forget(theirs);
        assertThat(redis.hasKey(key)).isFalse();
    }
}
