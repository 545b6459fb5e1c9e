package dev.flashsale.api.support;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.time.Instant;
import java.util.Date;

/** Bearer tokens signed with the local default secret, as scripts/token.py mints them. */
public final class Tokens {

    static final String SECRET = "local-dev-secret-0123456789abcdef-change-me";

    private Tokens() {}

    public static String shopper(String userId) {
        return sign(userId, "orders");
    }

    public static String admin() {
        return sign("ops-admin", "admin");
    }

    private static String sign(String subject, String scope) {
        try {
            SignedJWT jwt = new SignedJWT(
                    new JWSHeader(JWSAlgorithm.HS256),
                    new JWTClaimsSet.Builder()
                            .subject(subject)
                            .claim("scope", scope)
                            .expirationTime(Date.from(Instant.now().plusSeconds(3600)))
                            .build());
            jwt.sign(new MACSigner(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }
}
