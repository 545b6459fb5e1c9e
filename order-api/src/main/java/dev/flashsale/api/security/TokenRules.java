package dev.flashsale.api.security;

import dev.flashsale.common.secret.PlaceholderSecrets;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.crypto.spec.SecretKeySpec;
import org.springframework.core.env.Environment;
import org.springframework.security.oauth2.core.DelegatingOAuth2TokenValidator;
import org.springframework.security.oauth2.core.OAuth2TokenValidator;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtAudienceValidator;
import org.springframework.security.oauth2.jwt.JwtClaimNames;
import org.springframework.security.oauth2.jwt.JwtClaimValidator;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtIssuerValidator;
import org.springframework.security.oauth2.jwt.JwtTimestampValidator;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;

/**
 * What a bearer token must satisfy before its {@code sub} names a shopper: an HS256 signature with a secret
 * that is not a committed placeholder, an {@code exp}, {@code nbf} and {@code iat} within the clock skew, the
 * configured issuer and audience, and a {@code sub} that is a {@link #validSubject valid user id}.
 */
final class TokenRules {

    /** The column {@code purchase_order.user_id} is varchar(128). */
    static final int MAX_SUBJECT_LENGTH = 128;

    private TokenRules() {}

    static JwtDecoder decoder(SecurityProperties properties, Environment environment, Clock clock) {
        refusePlaceholderSecret(properties.jwtSecret(), environment);
        SecretKeySpec key = new SecretKeySpec(properties.jwtSecret().getBytes(StandardCharsets.UTF_8), "HmacSHA256");
        NimbusJwtDecoder decoder = NimbusJwtDecoder.withSecretKey(key)
                .macAlgorithm(MacAlgorithm.HS256)
                .build();
        decoder.setJwtValidator(validator(properties, clock));
        return decoder;
    }

    /** A committed secret signs tokens anyone can mint: only a local run may use one. */
    static void refusePlaceholderSecret(String secret, Environment environment) {
        PlaceholderSecrets.refuse("app.security.jwt-secret", "APP_SECURITY_JWT_SECRET", secret, environment);
    }

    static OAuth2TokenValidator<Jwt> validator(SecurityProperties properties, Clock clock) {
        JwtTimestampValidator timestamps = new JwtTimestampValidator(properties.clockSkew());
        timestamps.setAllowEmptyExpiryClaim(false);
        timestamps.setClock(clock);
        List<OAuth2TokenValidator<Jwt>> validators = new ArrayList<>();
        validators.add(timestamps);
        validators.add(new JwtClaimValidator<Instant>(
                JwtClaimNames.IAT,
                issuedAt ->
                        issuedAt == null || !issuedAt.isAfter(clock.instant().plus(properties.clockSkew()))));
        validators.add(new JwtClaimValidator<Object>(
                JwtClaimNames.SUB, subject -> subject instanceof String s && validSubject(s)));
        if (properties.issuer() != null && !properties.issuer().isBlank()) {
            validators.add(new JwtIssuerValidator(properties.issuer()));
        }
        if (properties.audience() != null && !properties.audience().isBlank()) {
            validators.add(new JwtAudienceValidator(properties.audience()));
        }
        return new DelegatingOAuth2TokenValidator<>(validators);
    }

    /**
     * A user id: 1 to 128 characters, none of them a control character. It is stored, logged and used in
     * Redis keys, so anything else is refused at the door (401) instead of failing deeper.
     */
    static boolean validSubject(String subject) {
        return !subject.isEmpty()
                && subject.length() <= MAX_SUBJECT_LENGTH
                && subject.codePoints().noneMatch(Character::isISOControl);
    }
}
