package dev.flashsale.api.input;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.RawHttp;
import dev.flashsale.api.support.Tokens;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One input policy, enforced before anything is reserved or written: refusals are 400s, never outages. */
class InputPolicyIntegrationTests extends ApiIntegrationTest {

    private static void assertRefused(Api.Response response) {
        assertThat(response.status()).as(response.body().toString()).isEqualTo(400);
        assertThat(response.header("Content-Type")).hasValue("application/problem+json");
        assertThat(response.code()).isIn("VALIDATION_FAILED", "MALFORMED_REQUEST");
    }

    private Api.Response purchaseRaw(long sale, String body) {
        return api.postRaw("/api/v1/sales/" + sale + "/orders", Tokens.shopper("strict-" + sale), body);
    }

    @Test
    void a_fractional_or_quoted_quantity_buys_nothing() {
        long sale = api.createSale(10, 5);
        assertRefused(purchaseRaw(sale, "{\"quantity\":1.5}"));
        assertRefused(purchaseRaw(sale, "{\"quantity\":\"1\"}"));
        assertRefused(purchaseRaw(sale, "{\"quantity\":true}"));
        assertRefused(purchaseRaw(sale, "{\"quantity\":1e10}"));
        assertThat(redisRemaining(sale)).isEqualTo(10);
    }

    private Map<String, Object> sale() {
        return Api.sale(
                "strict-" + System.nanoTime(),
                "Strict",
                1999,
                5,
                1,
                Instant.now().minusSeconds(60),
                Instant.now().plusSeconds(3600));
    }

    private Api.Response create(Map<String, Object> sale) {
        return api.post("/api/v1/sales", Tokens.admin(), sale);
    }

    @Test
    void a_fractional_price_is_refused_not_truncated() {
        Map<String, Object> sale = sale();
        sale.put("priceCents", 19.99);
        assertRefused(create(sale));
    }

    @Test
    void control_characters_in_text_are_refused_not_reported_as_an_outage() {
        for (String field : new String[] {"sku", "name"}) {
            Map<String, Object> sale = sale();
            sale.put(field, "nul\u0000" + System.nanoTime());
            assertRefused(create(sale));
        }
        Api.Response mode =
                api.put("/api/v1/admin/mode", Tokens.admin(), Map.of("mode", "SYNC", "reason", "nul\u0000"));
        assertRefused(mode);
    }

    @Test
    void instants_outside_the_sane_range_are_refused() {
        for (String instant :
                new String[] {"+300000-01-01T00:00:00Z", "+999999999-12-31T23:59:59Z", "-999999999-01-01T00:00:00Z"}) {
            Map<String, Object> sale = sale();
            sale.put("endsAt", instant);
            assertRefused(create(sale));
            sale = sale();
            sale.put("startsAt", instant);
            assertRefused(create(sale));
        }
    }

    @Test
    void a_mode_given_as_a_number_is_refused() {
        api.setMode("ASYNC");
        Api.Response response = api.put("/api/v1/admin/mode", Tokens.admin(), Map.of("mode", 0, "reason", "ordinal"));
        assertRefused(response);
        assertThat(api.get("/api/v1/admin/mode", Tokens.admin()).text("mode")).isEqualTo("ASYNC");
        api.setMode("SYNC");
    }

    @Test
    void header_values_outside_ascii_are_a_bad_request_not_a_server_error() {
        long sale = api.createSale(10, 5);
        RawHttp raw = new RawHttp(port);
        for (String header : new String[] {"Idempotency-Key: k€y", "Prefer: wait=\u0416"}) {
            RawHttp.Response response = raw.send(
                    "POST /api/v1/sales/" + sale + "/orders HTTP/1.1",
                    "{\"quantity\":1}",
                    "Authorization: Bearer " + Tokens.shopper("unicode-" + sale),
                    "Content-Type: application/json",
                    header);
            assertThat(response.status()).as(header).isEqualTo(400);
            assertThat(response.contentType()).startsWith("application/problem+json");
        }
        assertThat(redisRemaining(sale)).isEqualTo(10);
    }

    @Test
    void a_purchase_the_client_cannot_read_is_refused_before_anything_is_sold() {
        long sale = api.createSale(10, 5);
        RawHttp.Response response = new RawHttp(port)
                .send(
                        "POST /api/v1/sales/" + sale + "/orders HTTP/1.1",
                        "{\"quantity\":1}",
                        "Authorization: Bearer " + Tokens.shopper("xml-" + sale),
                        "Content-Type: application/json",
                        "Accept: application/xml");
        assertThat(response.status()).isEqualTo(406);
        assertThat(response.contentType()).startsWith("application/problem+json");
        assertThat(response.code()).isEqualTo("NOT_ACCEPTABLE");
        assertThat(redisRemaining(sale)).isEqualTo(10);
        assertThat(pgConfirmedOrders(sale)).isZero();
    }
}
