package dev.flashsale.api.door;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.security.SecurityProperties;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.springframework.stereotype.Component;

/**
 * A place in a sale's line as the shopper carries it ({@code Line-Place}): {@code sale.place.quantity.mac},
 * the MAC (HMAC-SHA256, 128 bits) over those and the shopper's id. A place is bound to its shopper, sale
 * and quantity and cannot be forged or handed on; it needs no lookup, so a retry is answered from memory.
 * Its key is derived from the bearer tokens' secret: one secret to keep, and a new one retires every
 * place with every token.
 */
@Component
class LinePlaces {

    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
    private static final int MAC_BYTES = 16;

    private final Mac prototype;

    LinePlaces(SecurityProperties security) {
        try {
            Mac derive = Mac.getInstance("HmacSHA256");
            derive.init(new SecretKeySpec(security.jwtSecret().getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] key = derive.doFinal("flashsale line place v1".getBytes(StandardCharsets.UTF_8));
            prototype = Mac.getInstance("HmacSHA256");
            prototype.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /** A shopper's place, as they carry it. */
    String issue(long saleId, String userId, long place, int quantity) {
        String claims = saleId + "." + place + "." + quantity;
        return claims + "." + ENCODER.encodeToString(mac(claims, userId));
    }

    /**
     * The place a shopper carries for this purchase.
     *
     * @throws ApiProblem 400 LINE_PLACE_INVALID when it was not issued to this shopper for this sale and
     *     quantity, or is not a place at all
     */
    long read(String token, long saleId, String userId, int quantity) {
        int last = token.lastIndexOf('.');
        String claims = last < 0 ? "" : token.substring(0, last);
        String[] parts = claims.split("\\.", -1);
        try {
            if (parts.length == 3
                    && Long.parseLong(parts[0]) == saleId
                    && Integer.parseInt(parts[2]) == quantity
                    && MessageDigest.isEqual(mac(claims, userId), DECODER.decode(token.substring(last + 1)))) {
                return Long.parseLong(parts[1]);
            }
        } catch (IllegalArgumentException notAPlace) {
            // not numbers, or not base64: not a place this API issued
        }
        throw new ApiProblem(
                ProblemCode.LINE_PLACE_INVALID,
                "Line-Place was not issued to you for this sale and quantity; send the purchase without it to join the line.");
    }

    private byte[] mac(String claims, String userId) {
        try {
            Mac mac = (Mac) prototype.clone();
            mac.update(claims.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            byte[] full = mac.doFinal(userId.getBytes(StandardCharsets.UTF_8));
            byte[] truncated = new byte[MAC_BYTES];
            System.arraycopy(full, 0, truncated, 0, MAC_BYTES);
            return truncated;
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("HmacSHA256 cannot be cloned", e);
        }
    }
}
