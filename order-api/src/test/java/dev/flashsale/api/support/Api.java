package dev.flashsale.api.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A real HTTP client against the API under test (no mocks between the client and the server). */
public final class Api {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    public Api(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    public record Response(int status, Map<String, List<String>> headers, JsonNode body) {
        public Optional<String> header(String name) {
            return headers.entrySet().stream()
                    .filter(e -> e.getKey().equalsIgnoreCase(name))
                    .flatMap(e -> e.getValue().stream())
                    .findFirst();
        }

        public String code() {
            return body.path("code").asString("");
        }

        public String text(String field) {
            return body.path(field).asString("");
        }
    }

    public Response get(String path, @Nullable String token) {
        return send(request(path, token).GET().build());
    }

    public Response post(String path, @Nullable String token, Object body, String... headers) {
        return send(json(path, token, body, headers)
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build());
    }

    public Response put(String path, @Nullable String token, Object body) {
        return send(json(path, token, body)
                .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build());
    }

    public Response postRaw(String path, @Nullable String token, String body) {
        return send(request(path, token)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    /** The body of a sale's creation; a test may change any field before it posts it. */
    public static Map<String, Object> sale(
            String sku, String name, int priceCents, int stock, int perUserLimit, Instant startsAt, Instant endsAt) {
        Map<String, Object> sale = new HashMap<>();
        sale.put("sku", sku);
        sale.put("name", name);
        sale.put("priceCents", priceCents);
        sale.put("stock", stock);
        sale.put("perUserLimit", perUserLimit);
        sale.put("startsAt", startsAt.toString());
        sale.put("endsAt", endsAt.toString());
        return sale;
    }

    /** Creates an open sale as admin and returns its id. */
    public long createSale(int stock, int perUserLimit) {
        return createSale(stock, perUserLimit, Instant.now().plusSeconds(3600));
    }

    /** Creates a sale, open since a minute ago until {@code endsAt}, as admin and returns its id. */
    public long createSale(int stock, int perUserLimit, Instant endsAt) {
        Response created = post(
                "/api/v1/sales",
                Tokens.admin(),
                sale(
                        "test-" + TestTopology.RUN + "-"
                                + ThreadLocalRandom.current().nextLong(1L << 40),
                        "Test sale",
                        1999,
                        stock,
                        perUserLimit,
                        Instant.now().minusSeconds(60),
                        endsAt));
        if (created.status() != 201) {
            throw new IllegalStateException("sale not created: " + created);
        }
        return created.body().path("id").asLong();
    }

    public Response purchase(long saleId, String user, int quantity, String... headers) {
        return post("/api/v1/sales/" + saleId + "/orders", Tokens.shopper(user), Map.of("quantity", quantity), headers);
    }

    /**
     * A purchase as a client of the contract makes it: told 503, it waits (a random share of Retry-After, so
     * that a test crowd does not come back as one) and asks again, carrying the place in the sale's line it
     * was given; at most {@code attempts} times. The last answer.
     */
    public Response purchaseInLine(long saleId, String user, int quantity, int attempts, String... headers) {
        Response answer = purchase(saleId, user, quantity, headers);
        for (int attempt = 1; answer.status() == 503 && attempt < attempts; attempt++) {
            long retryAfterMillis =
                    1000L * Long.parseLong(answer.header("Retry-After").orElse("1"));
            java.util.concurrent.locks.LockSupport.parkNanos(
                    Duration.ofMillis(ThreadLocalRandom.current().nextLong(retryAfterMillis / 5, retryAfterMillis + 1))
                            .toNanos());
            Optional<String> place = answer.header("Line-Place");
            List<String> again = new ArrayList<>();
            for (int i = 0; i + 1 < headers.length; i += 2) {
                if (!headers[i].equalsIgnoreCase("Line-Place") || place.isEmpty()) {
                    again.addAll(List.of(headers[i], headers[i + 1]));
                }
            }
            place.ifPresent(token -> again.addAll(List.of("Line-Place", token)));
            answer = purchase(saleId, user, quantity, again.toArray(String[]::new));
        }
        return answer;
    }

    public Response stock(long saleId) {
        return get("/api/v1/admin/sales/" + saleId + "/stock", Tokens.admin());
    }

    public Response setMode(String mode) {
        return put("/api/v1/admin/mode", Tokens.admin(), Map.of("mode", mode, "reason", "test"));
    }

    /** Runs {@code count} calls at once on virtual threads, released together, and returns their results. */
    public static <T> List<T> concurrently(int count, IntFunction<T> call) throws Exception {
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int n = i;
                Callable<T> task = () -> {
                    start.await();
                    return call.apply(n);
                };
                futures.add(executor.submit(task));
            }
            start.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get());
            }
            return results;
        }
    }

    private HttpRequest.Builder json(String path, @Nullable String token, Object body, String... headers) {
        HttpRequest.Builder request = request(path, token).header("Content-Type", "application/json");
        if (headers.length > 0) {
            request.headers(headers);
        }
        return request;
    }

    private HttpRequest.Builder request(String path, @Nullable String token) {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return request;
    }

    private Response send(HttpRequest request) {
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode body = response.body().isBlank() ? JSON.createObjectNode() : JSON.readTree(response.body());
            return new Response(response.statusCode(), response.headers().map(), body);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
