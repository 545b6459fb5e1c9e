package dev.flashsale.api.problem;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.RawHttp;
import dev.flashsale.api.support.Tokens;
import org.junit.jupiter.api.Test;

/** Every error the server can produce, from the container up, is application/problem+json with a code. */
class ErrorContractIntegrationTests extends ApiIntegrationTest {

    private RawHttp.Response send(String requestLine, String... headers) {
        return new RawHttp(port).send(requestLine, "", headers);
    }

    private static void assertProblem(RawHttp.Response response, int status, String code) {
        assertThat(response.status()).as(response.head()).isEqualTo(status);
        assertThat(response.contentType()).as(response.head()).startsWith("application/problem+json");
        assertThat(response.code()).as(response.body()).isEqualTo(code);
        assertThat(response.json().path("status").asInt()).isEqualTo(status);
    }

    @Test
    void the_error_page_requested_directly_is_an_unknown_route() {
        assertProblem(send("GET /error HTTP/1.1"), 404, "NOT_FOUND");
        assertProblem(send("POST /error HTTP/1.1"), 404, "NOT_FOUND");
    }

    @Test
    void firewall_rejections_are_problems() {
        String admin = "Authorization: Bearer " + Tokens.admin();
        for (String path : new String[] {
            "/api/v1/sales/..%2F1",
            "/api/v1/sales/%2e%2e/1",
            "/api/v1/sales/1%252F",
            "/api/v1/sales/1;x=1",
            "/api/v1//sales/1",
            "/api/v1/sales/../sales/1"
        }) {
            RawHttp.Response response = send("GET " + path + " HTTP/1.1", admin);
            assertThat(response.status()).as(path).isEqualTo(400);
            assertThat(response.contentType()).as(path).startsWith("application/problem+json");
            assertThat(response.code()).as(path).isEqualTo("MALFORMED_REQUEST");
        }
        assertProblem(send("FOO /api/v1/sales/1 HTTP/1.1", admin), 400, "MALFORMED_REQUEST");
    }

    @Test
    void requests_tomcat_refuses_before_the_application_are_problems() {
        for (String line : new String[] {
            "GET /api/v1/sales/%zz HTTP/1.1", "GET /api/v1/sales/[1] HTTP/1.1", "GET /api/v1/sales/{1} HTTP/1.1"
        }) {
            RawHttp.Response response = send(line);
            assertThat(response.status()).as(line).isEqualTo(400);
            assertThat(response.contentType()).as(line).startsWith("application/problem+json");
        }
        RawHttp.Response control = send("GET /api/v1/sales/1 HTTP/1.1", "X-Trace: a\u0001b");
        assertThat(control.status()).isEqualTo(400);
        assertThat(control.contentType()).startsWith("application/problem+json");
        RawHttp.Response huge = send("GET /api/v1/sales/1 HTTP/1.1", "X-Big: " + "a".repeat(20_000));
        assertThat(huge.status()).isIn(400, 431);
        assertThat(huge.contentType()).startsWith("application/problem+json");
    }

    @Test
    void mvc_refusals_are_problems() {
        String shopper = "Authorization: Bearer " + Tokens.shopper("errors");
        assertProblem(send("GET /api/v1/nowhere HTTP/1.1", shopper), 404, "NOT_FOUND");
        assertProblem(
                send("DELETE /api/v1/orders/" + java.util.UUID.randomUUID() + " HTTP/1.1", shopper),
                405,
                "METHOD_NOT_ALLOWED");
        RawHttp.Response xml = send("GET /api/v1/sales/1 HTTP/1.1", "Accept: application/xml");
        assertProblem(xml, 406, "NOT_ACCEPTABLE");
        RawHttp.Response text = new RawHttp(port)
                .send("POST /api/v1/sales/1/orders HTTP/1.1", "quantity=1", shopper, "Content-Type: text/plain");
        assertProblem(text, 415, "UNSUPPORTED_MEDIA_TYPE");
        assertProblem(send("GET /api/v1/sales/abc HTTP/1.1"), 400, "MALFORMED_REQUEST");
    }

    @Test
    void a_multipart_content_type_is_unsupported_not_a_server_error() {
        String shopper = "Authorization: Bearer " + Tokens.shopper("multipart");
        RawHttp.Response post = new RawHttp(port)
                .send(
                        "POST /api/v1/sales/1/orders HTTP/1.1",
                        "{\"quantity\":1}",
                        shopper,
                        "Content-Type: multipart/form-data");
        assertProblem(post, 415, "UNSUPPORTED_MEDIA_TYPE");
        assertThat(send("GET /api/v1/ping HTTP/1.1", shopper, "Content-Type: multipart/form-data")
                        .status())
                .isEqualTo(204);
    }

    @Test
    void a_query_string_the_container_cannot_parse_is_malformed_not_a_server_error() {
        String admin = "Authorization: Bearer " + Tokens.admin();
        assertProblem(send("GET /api/v1/admin/mode/changes?limit=1&=null HTTP/1.1", admin), 400, "MALFORMED_REQUEST");
        assertProblem(send("GET /api/v1/admin/sales?=x HTTP/1.1", admin), 400, "MALFORMED_REQUEST");
    }

    @Test
    void a_body_larger_than_the_limit_is_refused_before_it_is_read() {
        String shopper = "Authorization: Bearer " + Tokens.shopper("large-body");
        long sale = api.createSale(5, 1);
        String padding = " ".repeat(20 * 1024);
        RawHttp.Response post = new RawHttp(port)
                .send(
                        "POST /api/v1/sales/" + sale + "/orders HTTP/1.1",
                        "{\"quantity\":1" + padding + "}",
                        shopper,
                        "Content-Type: application/json");
        assertProblem(post, 413, "PAYLOAD_TOO_LARGE");
        assertThat(redisRemaining(sale)).isEqualTo(5);
    }
}
