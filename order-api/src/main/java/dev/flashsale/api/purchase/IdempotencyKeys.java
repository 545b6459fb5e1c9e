package dev.flashsale.api.purchase;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.sale.SaleRebuilt;
import dev.flashsale.api.throttle.PurchaseThrottle;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.redis.RedisBytes;
import dev.flashsale.common.stock.ReserveRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.context.event.EventListener;
import org.springframework.data.redis.connection.RedisStringCommands;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.stereotype.Component;

/**
 * Binds a user's Idempotency-Key to one order id (SET NX in Redis), together with a fingerprint of the
 * request. The reserve script is idempotent by order id, so every replay of the key, concurrent or not,
 * runs against the same order and can never become a second one. The binding is made in the throttle's
 * script call, which counts the attempt: one round trip for both.
 */
@Component
class IdempotencyKeys {

    private final StringRedisTemplate redis;
    private final PurchaseThrottle throttle;
    private final PurchaseProperties properties;

    IdempotencyKeys(StringRedisTemplate redis, PurchaseThrottle throttle, PurchaseProperties properties) {
        this.redis = redis;
        this.throttle = throttle;
        this.properties = properties;
    }

    /** The order id bound to the key: a fresh one on first use, the original one on a replay. */
    record Binding(UUID orderId, String fingerprint, boolean replay) {}

    /**
     * Counts the attempt (429 when the shopper's window is spent: nothing bound) and binds the key.
     *
     * @throws ApiProblem 429, or 422 when the key was bound to a different purchase
     * @throws RuntimeException when Redis cannot be asked
     */
    Binding bind(String userId, String key, long saleId, int quantity) {
        Binding fresh = fresh(saleId, quantity);
        String stored = throttle.admitBinding(userId, redisKey(userId, key), value(fresh), properties.idempotencyTtl());
        return stored == null ? fresh : found(stored, fresh.fingerprint());
    }

    /** A fresh order id for the key, not bound yet: its reserve call binds it ({@link #admission}). */
    Binding fresh(long saleId, int quantity) {
        return new Binding(OrderIds.next(saleId), fingerprint(saleId, quantity), false);
    }

    /**
     * The count of the order's attempt and the binding of its Idempotency-Key (if it has one) to the order, for
     * its reserve call to make: a binding found there is {@link #found}.
     */
    ReserveRequest.Admission admission(OrderRequested order) {
        String key = order.idempotencyKey();
        return throttle.admission(
                order.userId(),
                key == null ? null : redisKey(order.userId(), key),
                key == null ? null : value(order.fingerprint(), order.orderId()),
                properties.idempotencyTtl());
    }

    /**
     * The binding a key had before this attempt: {@code stored}, read as a replay of the original order.
     *
     * @throws ApiProblem 422 when the key was bound to a different purchase
     */
    static Binding found(String stored, String fingerprint) {
        int separator = stored.indexOf('|');
        if (!stored.substring(0, separator).equals(fingerprint)) {
            throw reused();
        }
        return new Binding(UUID.fromString(stored.substring(separator + 1)), fingerprint, true);
    }

    private static String value(Binding binding) {
        return value(binding.fingerprint(), binding.orderId());
    }

    /** What a key is bound to in Redis: the request's fingerprint and its order id ({@link #found} reads it). */
    private static String value(@Nullable String fingerprint, UUID orderId) {
        return fingerprint + "|" + orderId;
    }

    /**
     * Binds the key to a fresh order id in place of {@code released}, whose order was given back before it
     * existed: only if the key is still bound to that order (or to nothing), so that concurrent replays
     * agree on one new order. The binding that holds afterwards: the fresh one, or another replay's.
     *
     * @throws ApiProblem 422 when the key is now bound to a different purchase
     */
    Binding rebind(String userId, String key, long saleId, Binding released) {
        UUID fresh = OrderIds.next(saleId);
        String stored = redis.execute(
                REBIND,
                List.of(redisKey(userId, key)),
                value(released),
                value(released.fingerprint(), fresh),
                Long.toString(properties.idempotencyTtl().toMillis()));
        return stored == null || stored.isEmpty()
                ? new Binding(fresh, released.fingerprint(), false)
                : found(stored, released.fingerprint());
    }

    /**
     * Binds the key again to {@code original}, the order Postgres holds under it, in place of {@code fresh}
     * (bound because Redis had lost the binding): only if the key is still bound to {@code fresh} (or to
     * nothing), for the key's whole lifetime from now.
     */
    void restore(String userId, String key, Binding fresh, UUID original) {
        redis.execute(
                REBIND,
                List.of(redisKey(userId, key)),
                value(fresh),
                value(fresh.fingerprint(), original),
                Long.toString(properties.idempotencyTtl().toMillis()));
    }

    /** KEYS[1] the binding; ARGV: the binding to replace, the new one, its TTL in ms. Returns '' when set. */
    private static final RedisScript<String> REBIND = RedisScript.of("""
            local current = redis.call('GET', KEYS[1])
            if current and current ~= ARGV[1] then
                return current
            end
            redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
            return ''
            """, String.class);

    /** The answer to a key sent again with a different sale or body (here, or found in Postgres). */
    static ApiProblem reused() {
        return new ApiProblem(
                ProblemCode.IDEMPOTENCY_KEY_REUSED,
                "This Idempotency-Key was used for a different purchase; use a new key.");
    }

    /**
     * After a sale's Redis state was rebuilt, binds again every Idempotency-Key Postgres holds an order
     * for (where the key is unbound, and not older than the key's lifetime): a shopper who retries a
     * purchase whose answer was lost with Redis gets that order back, not a refusal.
     */
    @EventListener
    void restore(SaleRebuilt rebuilt) {
        Instant now = Instant.now();
        redis.executePipelined((RedisCallback<Object>) connection -> {
            for (SaleRebuilt.KeyedOrder order : rebuilt.keyed()) {
                Duration left = properties.idempotencyTtl().minus(Duration.between(order.createdAt(), now));
                if (left.toSeconds() > 0) {
                    connection
                            .stringCommands()
                            .set(
                                    RedisBytes.of(redisKey(order.userId(), order.key())),
                                    RedisBytes.of(value(order.fingerprint(), order.orderId())),
                                    Expiration.seconds(left.toSeconds()),
                                    RedisStringCommands.SetOption.ifAbsent());
                }
            }
            return null;
        });
    }

    /**
     * Unbinds the key of an order that provably does not exist (nothing was taken), if it has one and is still
     * bound to it: a binding another request with the key made meanwhile stays, and so does one the order's
     * reserve call never made (it may not have run).
     */
    void forget(OrderRequested order) {
        if (order.idempotencyKey() != null) {
            forget(order.userId(), order.idempotencyKey(), value(order.fingerprint(), order.orderId()));
        }
    }

    /** Unbinds a key {@code binding} bound this request, whose request failed (a 4xx), so it may be used again. */
    void forget(String userId, String key, Binding binding) {
        forget(userId, key, value(binding));
    }

    private void forget(String userId, String key, String bound) {
        try {
            redis.execute(UNBIND, List.of(redisKey(userId, key)), bound);
        } catch (RuntimeException e) {
            // The key then stays bound to an order that does not exist: its next replay binds it to a new one.
        }
    }

    /** KEYS[1] the binding; ARGV[1] the binding to remove. Deletes it only if it is still that one. */
    private static final RedisScript<Long> UNBIND = RedisScript.of("""
            if redis.call('GET', KEYS[1]) == ARGV[1] then
                return redis.call('DEL', KEYS[1])
            end
            return 0
            """, Long.class);

    /**
     * In the shopper's hash tag, which length-prefixes the user id: user and key are both free text that
     * may contain ':', and without the prefix user {@code u:k1} with key {@code k2} and user {@code u} with
     * key {@code k1:k2} shared one key.
     */
    static String redisKey(String userId, String key) {
        return "idem:" + PurchaseThrottle.shopperTag(userId) + ":" + key;
    }

    static String fingerprint(long saleId, int quantity) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest((saleId + ":" + quantity).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
