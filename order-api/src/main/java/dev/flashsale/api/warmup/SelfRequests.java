package dev.flashsale.api.warmup;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
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
     * Sends up to {@code count} requests from {@code senders} threads, each as a shopper of its own (the
     * throttle counts per shopper), until {@code deadline}. Answers, by HTTP status.
     */
    Map<Integer, Integer> send(long missingSaleId, String shopperPrefix, int count, int senders, Instant deadline)
            throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        List<Future<Map<Integer, Integer>>> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(senders)) {
            for (int s = 0; s < senders; s++) {
                results.add(pool.submit(() -> {
                    Map<Integer, Integer> answers = new TreeMap<>();
                    for (int i = next.getAndIncrement();
                            i < count && clock.instant().isBefore(deadline);
                            i = next.getAndIncrement()) {
                        answers.merge(send(request(i, missingSaleId, shopperPrefix + i)), 1, Integer::sum);
                    }
                    return answers;
                }));
            }
        }
        Map<Integer, Integer> answers = new TreeMap<>();
        for (Future<Map<Integer, Integer>> result : results) {
            try {
                result.get().forEach((status, n) -> answers.merge(status, n, Integer::sum));
            } catch (ExecutionException e) {
                throw new IllegalStateException("a warm-up sender failed", e.getCause());
            }
        }
        return answers;
    }

    /** Half purchases of the missing sale, a quarter status reads, a quarter purchases that fail validation. */
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
        return request.uri(base.resolve("/api/v1/sales/" + missingSaleId + "/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    /** The status, or 0 when no answer came (the warm-up goes on: it warms, it does not judge). */
    private int send(HttpRequest request) throws InterruptedException {
        try {
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return 0;
        }
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
