package dev.flashsale.api.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Tokens;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A token is checked completely before its {@code sub} names anybody: 401 with a problem, never 5xx. */
class TokenIntegrationTests extends ApiIntegrationTest {

    private Api.Response purchaseWith(String token) {
        long sale = api.createSale(10, 2);
        Api.Response response = api.post("/api/v1/sales/" + sale + "/orders", token, Map.of("quantity", 1));
        assertThat(redisRemaining(sale)).as("nothing sold").isEqualTo(10);
        return response;
    }

    private static void assertUnauthorized(Api.Response response) {
        assertThat(response.status()).isEqualTo(401);
        assertThat(response.header("Content-Type")).hasValue("application/problem+json");
        assertThat(response.code()).isEqualTo("UNAUTHORIZED");
    }

    @Test
    void refuses_a_token_without_expiry() {
        assertUnauthorized(purchaseWith(
                Tokens.sign(Tokens.shopperClaims("no-exp").expirationTime(null).build())));
    }

    @Test
    void refuses_a_token_issued_or_valid_only_in_the_future() {
        Date inAnHour = Date.from(Instant.now().plusSeconds(3600));
        assertUnauthorized(purchaseWith(
                Tokens.sign(Tokens.shopperClaims("early").issueTime(inAnHour).build())));
        assertUnauthorized(purchaseWith(Tokens.sign(
                Tokens.shopperClaims("early").notBeforeTime(inAnHour).build())));
    }

    @Test
    void refuses_an_expired_token() {
        assertUnauthorized(purchaseWith(Tokens.sign(Tokens.shopperClaims("late")
                .expirationTime(Date.from(Instant.now().minusSeconds(3600)))
                .build())));
    }

    @Test
    void refuses_a_subject_that_is_missing_empty_too_long_or_has_control_characters() {
        assertUnauthorized(
                purchaseWith(Tokens.sign(Tokens.shopperClaims("x").subject(null).build())));
        assertUnauthorized(purchaseWith(Tokens.shopper("")));
        assertUnauthorized(purchaseWith(Tokens.shopper("x".repeat(129))));
        assertUnauthorized(purchaseWith(Tokens.shopper("nul\u0000user")));
        assertUnauthorized(purchaseWith(Tokens.shopper("line\nbreak")));
    }

    @Test
    void accepts_the_longest_subject_and_any_printable_one() {
        assertThat(purchaseWith2(Tokens.shopper("y".repeat(128))).status()).isEqualTo(201);
        assertThat(purchaseWith2(Tokens.shopper("Zoë:ünïcode")).status()).isEqualTo(201);
    }

    private Api.Response purchaseWith2(String token) {
        long sale = api.createSale(10, 2);
        return api.post("/api/v1/sales/" + sale + "/orders", token, Map.of("quantity", 1));
    }
}
