package dev.flashsale.api.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtException;

class TokenRulesTests {

    private static final String SECRET = "a-real-secret-of-at-least-32-bytes-0123456789";
    private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);

    private static SecurityProperties properties(String secret, String issuer, String audience) {
        return new SecurityProperties(secret, issuer, audience, Duration.ofSeconds(30));
    }

    private static String sign(JWTClaimsSet claims) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        jwt.sign(new MACSigner(SECRET.getBytes(StandardCharsets.UTF_8)));
        return jwt.serialize();
    }

    private static JWTClaimsSet.Builder valid() {
        return new JWTClaimsSet.Builder()
                .subject("alice")
                .issueTime(Date.from(NOW))
                .expirationTime(Date.from(NOW.plusSeconds(600)));
    }

    @Test
    void refuses_to_start_with_a_committed_secret_outside_the_local_profile() {
        MockEnvironment production = new MockEnvironment();
        assertThatThrownBy(() -> TokenRules.decoder(
                        properties("local-dev-secret-0123456789abcdef-change-me", "", ""), production, clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("APP_SECURITY_JWT_SECRET");
        assertThatThrownBy(() -> TokenRules.decoder(
                        properties("change-me-change-me-change-me-change-me", "", ""), production, clock))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void starts_with_a_committed_secret_in_the_local_profile_and_with_a_real_one_anywhere() {
        MockEnvironment local = new MockEnvironment();
        local.setActiveProfiles("local");
        assertThatCode(() -> TokenRules.decoder(
                        properties("local-dev-secret-0123456789abcdef-change-me", "", ""), local, clock))
                .doesNotThrowAnyException();
        assertThatCode(() -> TokenRules.decoder(properties(SECRET, "", ""), new MockEnvironment(), clock))
                .doesNotThrowAnyException();
    }

    @Test
    void checks_issuer_and_audience_when_configured() throws Exception {
        JwtDecoder decoder = TokenRules.decoder(
                properties(SECRET, "https://id.shop.example", "flashsale"), new MockEnvironment(), clock);
        String good = sign(
                valid().issuer("https://id.shop.example").audience("flashsale").build());
        assertThat(decoder.decode(good).getSubject()).isEqualTo("alice");
        assertThatThrownBy(
                        () -> decoder.decode(sign(valid().audience("flashsale").build())))
                .isInstanceOf(JwtException.class);
        assertThatThrownBy(() -> decoder.decode(sign(valid().issuer("https://evil.example")
                        .audience("flashsale")
                        .build())))
                .isInstanceOf(JwtException.class);
        assertThatThrownBy(() -> decoder.decode(sign(valid().issuer("https://id.shop.example")
                        .audience("other")
                        .build())))
                .isInstanceOf(JwtException.class);
    }

    @Test
    void tolerates_the_configured_clock_skew_and_no_more() throws Exception {
        JwtDecoder decoder = TokenRules.decoder(properties(SECRET, "", ""), new MockEnvironment(), clock);
        assertThat(decoder.decode(
                        sign(valid().issueTime(Date.from(NOW.plusSeconds(20))).build())))
                .isNotNull();
        assertThatThrownBy(() -> decoder.decode(
                        sign(valid().issueTime(Date.from(NOW.plusSeconds(60))).build())))
                .isInstanceOf(JwtException.class);
        assertThatThrownBy(() -> decoder.decode(sign(
                        valid().expirationTime(Date.from(NOW.minusSeconds(60))).build())))
                .isInstanceOf(JwtException.class);
    }

    @Test
    void a_subject_is_one_to_128_characters_without_control_characters() {
        assertThat(TokenRules.validSubject("alice")).isTrue();
        assertThat(TokenRules.validSubject("u:k1")).isTrue();
        assertThat(TokenRules.validSubject("x".repeat(128))).isTrue();
        assertThat(TokenRules.validSubject("")).isFalse();
        assertThat(TokenRules.validSubject("x".repeat(129))).isFalse();
        assertThat(TokenRules.validSubject("a\u0000b")).isFalse();
        assertThat(TokenRules.validSubject("a\u009Fb")).isFalse();
    }
}
