package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import org.junit.jupiter.api.Test;

class IdempotencyScopeIntegrationTests extends ApiIntegrationTest {

    @Test
    void two_users_whose_id_and_key_concatenate_alike_get_their_own_orders() {
        long sale = api.createSale(10, 2);
        String user = "scope-" + sale;

        Api.Response first = api.purchase(sale, user + ":k1", 1, "Idempotency-Key", "k2");
        Api.Response second = api.purchase(sale, user, 1, "Idempotency-Key", "k1:k2");

        assertThat(first.status()).isEqualTo(201);
        assertThat(second.status()).isEqualTo(201);
        assertThat(second.text("orderId")).isNotEqualTo(first.text("orderId"));
        assertThat(pgConfirmedOrders(sale)).isEqualTo(2);
    }
}
