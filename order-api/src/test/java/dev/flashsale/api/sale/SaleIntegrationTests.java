package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Tokens;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis-cluster")
class SaleIntegrationTests extends ApiIntegrationTest {

    private static Map<String, Object> sale(String sku) {
        return Api.sale(
                sku,
                "Limited sneaker",
                12900,
                250,
                2,
                Instant.now().minusSeconds(10),
                Instant.now().plusSeconds(600));
    }

    private static String sku() {
        return "sku-" + System.nanoTime();
    }

    @Test
    void admin_creates_a_sale_that_reads_back_with_its_stock_in_redis_and_postgres() {
        Api.Response created = api.post("/api/v1/sales", Tokens.admin(), sale(sku()));

        assertThat(created.status()).isEqualTo(201);
        long id = created.body().path("id").asLong();
        assertThat(created.header("Location")).contains("/api/v1/sales/" + id);

        Api.Response read = api.get("/api/v1/sales/" + id, null);
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.body().path("stock").asInt()).isEqualTo(250);
        assertThat(read.body().path("remaining").asLong()).isEqualTo(250);
        assertThat(read.text("state")).isEqualTo("ACTIVE");
        assertThat(read.body().path("perUserLimit").asInt()).isEqualTo(2);
        assertThat(redisRemaining(id)).isEqualTo(pgRemaining(id)).isEqualTo(250);
    }

    @Test
    void a_sale_not_started_yet_is_upcoming_and_one_whose_redis_stock_is_lost_comes_back() {
        Map<String, Object> upcoming = sale(sku());
        upcoming.put("startsAt", Instant.now().plusSeconds(300).toString());
        long id = api.post("/api/v1/sales", Tokens.admin(), upcoming)
                .body()
                .path("id")
                .asLong();
        assertThat(api.get("/api/v1/sales/" + id, null).text("state")).isEqualTo("UPCOMING");

        long closed = api.post("/api/v1/sales", Tokens.admin(), sale(sku()))
                .body()
                .path("id")
                .asLong();
        redis.delete("{sale:" + closed + "}");
        Api.Response read = api.get("/api/v1/sales/" + closed, null);
        assertThat(read.text("state")).isEqualTo("REBUILDING");
        Api.Response meanwhile = api.purchase(closed, "early-shopper", 1);
        assertThat(meanwhile.status()).isEqualTo(503);
        assertThat(meanwhile.code()).isEqualTo(ProblemCode.SALE_REBUILDING.code());
        assertThat(meanwhile.header("Retry-After")).isPresent();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Api.Response back = api.get("/api/v1/sales/" + closed, null);
            assertThat(back.text("state")).isEqualTo("ACTIVE");
            assertThat(back.body().path("remaining").asLong()).isEqualTo(250);
        });
    }

    @Test
    void creating_a_sale_needs_a_token_and_the_admin_scope() {
        Api.Response anonymous = api.post("/api/v1/sales", null, sale(sku()));
        assertThat(anonymous.status()).isEqualTo(401);
        assertThat(anonymous.code()).isEqualTo("UNAUTHORIZED");
        assertThat(anonymous.header("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));

        Api.Response shopper = api.post("/api/v1/sales", Tokens.shopper("mallory"), sale(sku()));
        assertThat(shopper.status()).isEqualTo(403);
        assertThat(shopper.code()).isEqualTo("FORBIDDEN");

        Api.Response forged = api.post("/api/v1/sales", Tokens.admin() + "x", sale(sku()));
        assertThat(forged.status()).isEqualTo(401);
    }

    @Test
    void rejects_negative_stock_with_the_field_named() {
        Map<String, Object> sale = sale(sku());
        sale.put("stock", -1);
        Api.Response response = api.post("/api/v1/sales", Tokens.admin(), sale);
        assertThat(response.status()).isEqualTo(400);
        assertThat(response.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(response.body().path("errors").findValuesAsString("field")).containsExactly("stock");
    }

    @Test
    void rejects_a_sale_that_ends_before_it_starts() {
        Map<String, Object> sale = sale(sku());
        sale.put("endsAt", Instant.now().minusSeconds(3600).toString());
        Api.Response response = api.post("/api/v1/sales", Tokens.admin(), sale);
        assertThat(response.status()).isEqualTo(400);
        assertThat(response.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(response.body().path("errors").toString()).contains("endsAt must be after startsAt");
    }

    @Test
    void rejects_missing_fields_naming_each_one() {
        Api.Response response = api.post("/api/v1/sales", Tokens.admin(), Map.of("name", "incomplete"));
        assertThat(response.status()).isEqualTo(400);
        assertThat(response.body().path("errors").findValuesAsString("field"))
                .contains("sku", "priceCents", "stock", "perUserLimit", "startsAt", "endsAt");
        assertThat(response.body().toString()).doesNotContain("Exception").doesNotContain("at dev.");
    }

    @Test
    void rejects_unreadable_json_and_unknown_sales_with_problem_details() {
        Api.Response unreadable = api.postRaw("/api/v1/sales", Tokens.admin(), "{not json");
        assertThat(unreadable.status()).isEqualTo(400);
        assertThat(unreadable.code()).isEqualTo("MALFORMED_REQUEST");

        Api.Response missing = api.get("/api/v1/sales/999999999", null);
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.code()).isEqualTo("SALE_NOT_FOUND");
    }

    @Test
    void rejects_a_duplicate_sku() {
        String sku = sku();
        assertThat(api.post("/api/v1/sales", Tokens.admin(), sale(sku)).status())
                .isEqualTo(201);
        Api.Response again = api.post("/api/v1/sales", Tokens.admin(), sale(sku));
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.code()).isEqualTo("DUPLICATE_SKU");
    }
}
