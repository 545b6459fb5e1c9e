package dev.flashsale.api.openapi;

import dev.flashsale.api.PurchaseRoute;
import dev.flashsale.api.door.SaleLine;
import dev.flashsale.api.problem.ProblemCode;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.ArraySchema;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import io.swagger.v3.oas.models.servers.Server;
import java.math.BigDecimal;
import java.util.List;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The published contract ({@code /v3/api-docs}, checked in as {@code order-api/openapi.json}): springdoc
 * derives paths, bodies and parameters from the controllers; this adds what it cannot see: the bearer
 * scheme, and the problem responses every operation can answer (the advice, the security filters and the
 * container produce them, not the handler).
 */
@Configuration(proxyBeanMethods = false)
class OpenApiConfiguration {

    static final String BEARER = "bearer";
    static final String RETRY_AFTER = "Retry-After";

    @Bean
    OpenAPI flashsaleOpenApi() {
        return new OpenAPI()
                .info(new Info()
                        .title("flashsale order API")
                        .version("v1")
                        .description("Flash-sale purchases in SYNC, ASYNC and AUTO modes. Every error is"
                                + " application/problem+json with a stable code."))
                .servers(List.of(new Server().url("/")))
                .components(new Components()
                        .addSecuritySchemes(
                                BEARER,
                                new SecurityScheme()
                                        .type(SecurityScheme.Type.HTTP)
                                        .scheme("bearer")
                                        .bearerFormat("JWT")
                                        .description("HS256; exp required; sub 1-128 characters without"
                                                + " control characters; scope orders (shopper) or admin")))
                .addSecurityItem(new SecurityRequirement().addList(BEARER));
    }

    private static Schema<?> problemSchema() {
        Schema<?> fieldError =
                new ObjectSchema().addProperty("field", new StringSchema()).addProperty("message", new StringSchema());
        return new ObjectSchema()
                .description("RFC 9457 problem details with a stable code")
                .addProperty("type", new StringSchema())
                .addProperty("title", new StringSchema())
                .addProperty("status", new IntegerSchema())
                .addProperty("detail", new StringSchema())
                .addProperty("instance", new StringSchema())
                .addProperty("code", new StringSchema())
                .addProperty("errors", new ArraySchema().items(fieldError))
                .required(List.of("status", "code"));
    }

    /** The problems any operation can answer, added where the operation does not document them itself. */
    @Bean
    OpenApiCustomizer problemResponses() {
        return openApi -> openApi.getPaths()
                .forEach((path, item) ->
                        item.readOperationsMap().forEach((method, operation) -> addProblems(path, method, operation)));
    }

    private static void addProblems(String path, PathItem.HttpMethod method, Operation operation) {
        ApiResponses responses = operation.getResponses();
        problem(responses, "400", "The request is malformed or has invalid fields", false);
        problem(responses, "401", "A valid bearer token is required", false);
        problem(responses, "403", "This token may not do that", false);
        problem(responses, "404", "No such resource", false);
        problem(responses, "405", "Method not supported here", false);
        problem(responses, "406", "The client accepts no JSON representation", false);
        if (method == PathItem.HttpMethod.POST || method == PathItem.HttpMethod.PUT) {
            problem(responses, "415", "The body must be application/json", false);
        }
        if (PurchaseRoute.TEMPLATE.equals(path) && method == PathItem.HttpMethod.POST) {
            problem(responses, "409", "Refused: SALE_NOT_ACTIVE, SOLD_OUT or PURCHASE_LIMIT_REACHED", false);
            problem(responses, "422", "IDEMPOTENCY_KEY_REUSED: the key was used for another purchase", false);
            problem(responses, "429", "TOO_MANY_REQUESTS: the shopper's purchase rate limit is spent", true);
            problem(
                    responses,
                    "503",
                    "UNAVAILABLE: nothing was taken, retry after Retry-After. OUTCOME_UNKNOWN: the order may exist or"
                            + " still be written; its id is in orderId and Location (GET it: 404 while it is not"
                            + " written), and a retry with the same Idempotency-Key gets its answer. The sale's line"
                            + " (a sale with few units): BEYOND_STOCK, the places ahead cover the units left;"
                            + " IN_LINE, the place is served and the API is at capacity; UNITS_HELD, none left but"
                            + " held units may come back. Each answers the shopper's place (Line-Place): ask again"
                            + " with it after Retry-After to keep it",
                    true);
            ApiResponse unavailable = responses.get("503");
            unavailable.addHeaderObject(
                    "Location",
                    new Header().description("OUTCOME_UNKNOWN only: the order").schema(new StringSchema()));
            Schema<?> body = unavailable
                    .getContent()
                    .get(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON_VALUE)
                    .getSchema();
            body.addProperty(
                    "orderId",
                    new StringSchema()
                            .format("uuid")
                            .description("OUTCOME_UNKNOWN only: the order that may exist, also in Location"));
            body.addProperty(
                    "place",
                    new IntegerSchema()
                            .format("int64")
                            .description("BEYOND_STOCK, IN_LINE: the shopper's place (units asked for before it)"));
            body.addProperty(
                    "serving",
                    new IntegerSchema()
                            .format("int64")
                            .description("BEYOND_STOCK, IN_LINE: places before this one are served"));
            body.addProperty(
                    "linePlace",
                    new StringSchema().description("BEYOND_STOCK, IN_LINE: the place to send back as Line-Place"));
            Header place = new Header()
                    .description("The shopper's place in the sale's line: send it back on a retry to keep it")
                    .schema(new StringSchema());
            unavailable.addHeaderObject(SaleLine.PLACE_HEADER, place);
            responses.forEach((status, response) -> {
                if (!status.equals("503") && (status.startsWith("2") || status.equals("409"))) {
                    response.addHeaderObject(SaleLine.PLACE_HEADER, place);
                }
            });
        }
        if (path.equals("/api/v1/sales") && method == PathItem.HttpMethod.POST) {
            problem(responses, "409", ProblemCode.DUPLICATE_SKU.code(), false);
        }
        problem(responses, "500", "Unexpected error", false);
        problem(responses, "503", "A backing service is unavailable; nothing was taken", true);
    }

    private static void problem(ApiResponses responses, String status, String description, boolean retryAfter) {
        if (responses.containsKey(status)) {
            return;
        }
        ApiResponse response = new ApiResponse()
                .description(description)
                .content(new Content()
                        .addMediaType(
                                org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON_VALUE,
                                new MediaType().schema(problemSchema())));
        if (retryAfter) {
            response.addHeaderObject(
                    RETRY_AFTER,
                    new Header()
                            .description("Seconds to wait before retrying")
                            .schema(new IntegerSchema().minimum(BigDecimal.ONE)));
        }
        responses.addApiResponse(status, response);
    }
}
