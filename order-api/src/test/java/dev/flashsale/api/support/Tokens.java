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

    /** The claims of a valid shopper token, to be bent by a test. */
    public static JWTClaimsSet.Builder shopperClaims(String userId) {
        Instant now = Instant.now();
        return new JWTClaimsSet.Builder()
                .subject(userId)
                .claim("scope", "orders")
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plusSeconds(3600)));
    }

    public static String sign(JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
            jwt.sign(new MACSigner(SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sign(String subject, String scope) {
        return sign(shopperClaims(subject).claim("scope", scope).build());
    }
}
