package dev.flashsale.api.warmup;

import dev.flashsale.api.PurchaseRoute;
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
 * that does not exist (404) and invalid purchases (400). Nothing in them can reserve or write anything.
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
        try {
            return http.send(request(i, missingSaleId, shopperPrefix + i), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return 0;
        }
    }

    private HttpRequest request(int i, long missingSaleId, String shopper) {
        HttpRequest.Builder request = HttpRequest.newBuilder()
                .timeout(TIMEOUT)
                .header("Authorization", "Bearer " + token(shopper))
                .header("Accept", "application/json, application/problem+json");
        if (i % 4 == 3) {
            return request.uri(base.resolve("/api/v1/orders/" + UUID.randomUUID()))
                    .GET()
                    .build();
        }
        String body = i % 4 == 2 ? "{\"quantity\":0}" : "{\"quantity\":1}";
        return request.uri(base.resolve(PurchaseRoute.of(missingSaleId)))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
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
