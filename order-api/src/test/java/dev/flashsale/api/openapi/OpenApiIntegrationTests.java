package dev.flashsale.api.openapi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The served contract is the checked-in one ({@code order-api/openapi.json}, what schemathesis and clients
 * read). When the API changes, the test writes the served document to {@code target/openapi.json}: review
 * it and copy it over the checked-in file.
 */
class OpenApiIntegrationTests extends ApiIntegrationTest {

    private static final Path CHECKED_IN = Path.of("openapi.json");
    private static final Path SERVED = Path.of("target", "openapi.json");
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();

    @Test
    void the_served_document_is_the_checked_in_one() throws Exception {
        Api.Response response = api.get("/v3/api-docs", null);
        assertThat(response.status()).isEqualTo(200);
        JsonNode served = response.body();
        Files.writeString(SERVED, JSON.writeValueAsString(JSON.treeToValue(served, Object.class)) + "\n");

        assertThat(served.path("openapi").asString()).startsWith("3.1");
        assertThat(CHECKED_IN).as("the checked-in contract").exists();
        JsonNode checkedIn = JSON.readTree(Files.readString(CHECKED_IN));
        assertThat(served)
                .as("the served OpenAPI document drifted from %s; review %s and copy it over", CHECKED_IN, SERVED)
                .isEqualTo(checkedIn);
    }
}
