package dev.flashsale.api.warmup;

import dev.flashsale.api.PurchaseRoute;
import dev.flashsale.api.door.SaleLine;
import dev.flashsale.api.security.SecurityProperties;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.crypto.spec.SecretKeySpec;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoder;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.security.oauth2.jwt.NimbusJwtEncoder;

/**
 * Requests to the instance's own port, through Tomcat, the security filters (a token minted here with
 * the configured secret), JSON binding and validation, the throttle, the purchase and status controllers
 * and the problem+json answers: purchases of a sale that does not exist (404), status reads of an order
 * that does not exist (404) and invalid purchases (400); and a crowd in a sale's line ({@link #inLine}).
 * Nothing in them can reserve or write anything.
 */
class SelfRequests {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final HttpClient http;
    private final URI base;
    private final JwtEncoder tokens;
    private final SecurityProperties security;
    private final Clock clock;

    SelfRequests(int port, SecurityProperties security, Clock clock) {
        this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
        this.base = URI.create("http://127.0.0.1:" + port);
        SecretKeySpec key = new SecretKeySpec(security.jwtSecret().getBytes(StandardCharsets.UTF_8), "HmacSHA256");
        this.tokens = NimbusJwtEncoder.withSecretKey(key).build();
        this.security = security;
        this.clock = clock;
    }

    /**
     * Sends the {@code i}th request, as a shopper of its own (the throttle counts per shopper): half of them
     * purchases of the missing sale, a quarter status reads, a quarter purchases that fail validation. The
     * answer's HTTP status, or 0 when no answer came (the warm-up goes on: it warms, it does not judge).
     */
    int send(int i, long missingSaleId, String shopperPrefix) throws InterruptedException {
        return send(request(i, missingSaleId, shopperPrefix + i));
    }

    private int send(HttpRequest request) throws InterruptedException {
        return exchange(request).map(HttpResponse::statusCode).orElse(0);
    }

    /** The answer, or empty when none came. */
    private Optional<HttpResponse<Void>> exchange(HttpRequest request) throws InterruptedException {
        try {
            return Optional.of(http.send(request, HttpResponse.BodyHandlers.discarding()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * The {@code i}th shopper of a crowd in the line of a sale that Redis alone knows: their first attempt
     * (every other one with an Idempotency-Key) gets a place; a place the front serves goes on to the door and
     * the purchase path, which finds no such sale (404); a place behind it is told BEYOND_STOCK (503), and the
     * shopper asks once more with the place, as a client in a flash sale does. The answers' HTTP statuses, in
     * order (0 when no answer came).
     */
    List<Integer> inLine(int i, long saleId, String shopperPrefix) throws InterruptedException {
        String shopper = shopperPrefix + i;
        HttpRequest.Builder first = purchase(shopper, saleId, "{\"quantity\":1}");
        if (i % 2 == 0) {
            first.header("Idempotency-Key", shopper);
        }
        Optional<HttpResponse<Void>> answered = exchange(first.build());
        if (answered.isEmpty()) {
            return List.of(0);
        }
        HttpResponse<Void> answer = answered.get();
        Optional<String> place = answer.headers().firstValue(SaleLine.PLACE_HEADER);
        if (answer.statusCode() != 503 || place.isEmpty()) {
            return List.of(answer.statusCode());
        }
        HttpRequest again = purchase(shopper, saleId, "{\"quantity\":1}")
                .header(SaleLine.PLACE_HEADER, place.get())
                .build();
        return List.of(answer.statusCode(), send(again));
    }

    private HttpRequest request(int i, long missingSaleId, String shopper) {
        if (i % 4 == 3) {
            return authorized(shopper)
                    .uri(base.resolve("/api/v1/orders/" + UUID.randomUUID()))
                    .GET()
                    .build();
        }
        return purchase(shopper, missingSaleId, i % 4 == 2 ? "{\"quantity\":0}" : "{\"quantity\":1}")
                .build();
    }

    private HttpRequest.Builder purchase(String shopper, long saleId, String body) {
        return authorized(shopper)
                .uri(base.resolve(PurchaseRoute.of(saleId)))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    private HttpRequest.Builder authorized(String shopper) {
        return HttpRequest.newBuilder()
                .timeout(TIMEOUT)
                .header("Authorization", "Bearer " + token(shopper))
                .header("Accept", "application/json, application/problem+json");
    }

    private String token(String shopper) {
        Instant now = clock.instant();
        JwtClaimsSet.Builder claims = JwtClaimsSet.builder()
                .subject(shopper)
                .claim("scope", "orders")
                .issuedAt(now)
                .expiresAt(now.plus(Duration.ofMinutes(5)));
        if (security.issuer() != null && !security.issuer().isBlank()) {
            claims.issuer(security.issuer());
        }
        if (security.audience() != null && !security.audience().isBlank()) {
            claims.audience(List.of(security.audience()));
        }
        JwsHeader header = JwsHeader.with(MacAlgorithm.HS256).build();
        return tokens.encode(JwtEncoderParameters.from(header, claims.build())).getTokenValue();
    }
}
