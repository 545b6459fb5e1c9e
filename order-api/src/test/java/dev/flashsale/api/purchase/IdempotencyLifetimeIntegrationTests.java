package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * An Idempotency-Key names one purchase of one sale: bound to it for its lifetime
 * (app.purchase.idempotency-ttl, 24 h; 2 s here), then free for a purchase of another sale, in Redis and
 * in Postgres alike.
 */
class IdempotencyLifetimeIntegrationTests extends ApiIntegrationTest {

    @DynamicPropertySource
    static void shortLifetime(DynamicPropertyRegistry registry) {
        registry.add("app.purchase.idempotency-ttl", () -> "2s");
    }

    @Test
    void a_key_is_the_original_purchase_within_its_lifetime_and_free_for_another_sale_after_it() throws Exception {
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        long first = api.createSale(10, 1);
        long second = api.createSale(10, 1);
        String user = "lifetime-" + first;
        String key = UUID.randomUUID().toString();

        Api.Response original = api.purchase(first, user, 1, "Idempotency-Key", key);
        assertThat(original.status()).isEqualTo(201);
        Api.Response replay = api.purchase(first, user, 1, "Idempotency-Key", key);
        assertThat(replay.status()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(original.text("orderId"));
        Api.Response elsewhere = api.purchase(second, user, 1, "Idempotency-Key", key);
        assertThat(elsewhere.status() + " " + elsewhere.code()).isEqualTo("422 IDEMPOTENCY_KEY_REUSED");

        Thread.sleep(2500); // past the key's lifetime: Redis has forgotten the binding
        Api.Response later = api.purchase(second, user, 1, "Idempotency-Key", key);
        assertThat(later.status() + " " + later.code())
                .as("the same key for another sale after its lifetime")
                .isEqualTo("201 ");
        assertThat(later.text("orderId")).isNotEqualTo(original.text("orderId"));
        assertThat(pgConfirmedOrders(first)).isEqualTo(1);
        assertThat(pgConfirmedOrders(second)).isEqualTo(1);
        Api.Response replayOfLater = api.purchase(second, user, 1, "Idempotency-Key", key);
        assertThat(replayOfLater.status()).isEqualTo(201);
        assertThat(replayOfLater.text("orderId")).isEqualTo(later.text("orderId"));
    }
}
