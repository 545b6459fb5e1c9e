package dev.flashsale.api.throttle;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.common.redis.LuaScripts;
import dev.flashsale.common.redis.ScriptCalls;
import dev.flashsale.common.stock.ReserveRequest;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The first defence against a bot hammering a sale: each shopper may attempt {@code app.throttle.purchases}
 * purchases per {@code app.throttle.window}, counted in Redis (a fixed window, one script call), so the
 * limit holds however many API instances share the load. Beyond it: 429 with Retry-After, before anything
 * is reserved. An attempt with an Idempotency-Key binds the key in the same script call, one round trip
 * instead of two on the purchase path: the shopper's keys share a hash tag ({@link #shopperTag}). On one
 * Redis master the purchase's reserve call counts and binds instead ({@link #admission}), and the purchase
 * makes no call of its own: docs/decisions/0030-the-reserve-call-counts-the-attempt.md.
 */
@Component
public class PurchaseThrottle {

    private static final Logger log = LoggerFactory.getLogger(PurchaseThrottle.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> COUNT = LuaScripts.load("throttle", List.class);

    /** Every purchase runs the script: its wait is Lettuce's own, without a timer per call. */
    private final ScriptCalls scripts;

    private final ThrottleProperties properties;
    private final String windowMillis;
    private final String limit;
    private final boolean inReserve;

    /**
     * Shoppers a reserve call found over the limit, and until when ({@link System#nanoTime()}): their next
     * attempts within the window are refused here, and a bot's storm stays out of the paths' batches. Per
     * instance: each lets a spent shopper's attempts through until one comes back THROTTLED.
     */
    private final Cache<String, Long> spentUntil;

    PurchaseThrottle(StringRedisTemplate redis, ThrottleProperties properties) {
        this.scripts = new ScriptCalls(redis);
        this.properties = properties;
        this.windowMillis = Long.toString(properties.window().toMillis());
        this.limit = Integer.toString(properties.purchases());
        // On Redis Cluster the shopper's keys live on another master than the sale's.
        this.inReserve = properties.inReserve()
                && !(redis.getConnectionFactory() instanceof LettuceConnectionFactory lettuce
                        && lettuce.isClusterAware());
        this.spentUntil = Caffeine.newBuilder()
                .maximumSize(100_000)
                .expireAfterWrite(properties.window())
                .build();
    }

    /** Throws 429 for a shopper a reserve call found over the limit, while that window lasts. */
    public void refuseIfSpent(String userId) {
        Long until = spentUntil.getIfPresent(userId);
        long left = until == null ? 0 : until - System.nanoTime();
        if (left > 0) {
            throw spent(Duration.ofNanos(left).toMillis() + 1);
        }
    }

    /** 429 for an attempt a reserve call found over the limit, whose window ends in {@code waitMillis}. */
    public ApiProblem spent(String userId, long waitMillis) {
        spentUntil.put(userId, System.nanoTime() + Duration.ofMillis(waitMillis).toNanos());
        return spent(waitMillis);
    }

    /** Whether a purchase's reserve call counts its attempt ({@link #admission}): one Redis master, and asked for. */
    public boolean countsInReserve() {
        return inReserve;
    }

    /**
     * The count of the shopper's attempt and, with {@code bindingKey}, the binding of its Idempotency-Key to
     * {@code binding}, for the reserve call to make as {@link #admitBinding} would: it answers THROTTLED or
     * BOUND for an attempt that {@link #spent} or whose key was bound before.
     */
    public ReserveRequest.Admission admission(
            String userId, @Nullable String bindingKey, @Nullable String binding, Duration ttl) {
        return new ReserveRequest.Admission(
                key(userId),
                properties.window().toMillis(),
                properties.purchases(),
                bindingKey,
                binding,
                ttl.toMillis());
    }

    /** Counts one purchase attempt of the shopper; throws 429 when the shopper's window is spent. */
    public void admit(String userId) {
        List<?> verdict;
        try {
            verdict = scripts.run(COUNT, List.of(key(userId)), windowMillis, limit);
        } catch (RuntimeException e) {
            // Without Redis nothing can be sold anyway: the purchase answers 503 itself.
            log.debug("purchase throttle not counted: {}", e.toString());
            return;
        }
        refuseIfOver(verdict);
    }

    /**
     * Counts one purchase attempt of the shopper and, if it is admitted, binds {@code bindingKey} (which
     * must carry the shopper's {@link #shopperTag}) to {@code value} unless it is bound already.
     *
     * @return null when the key was bound now, else the value it was bound to before
     * @throws dev.flashsale.api.problem.ApiProblem 429 when the shopper's window is spent (nothing bound)
     * @throws RuntimeException when Redis cannot be asked
     */
    public @Nullable String admitBinding(String userId, String bindingKey, String value, Duration ttl) {
        List<?> verdict = scripts.run(
                COUNT, List.of(key(userId), bindingKey), windowMillis, limit, value, Long.toString(ttl.toMillis()));
        refuseIfOver(verdict);
        return verdict.size() > 1 && verdict.get(1) instanceof String stored ? stored : null;
    }

    private void refuseIfOver(List<?> verdict) {
        long wait = verdict.isEmpty() ? 0 : ((Number) verdict.get(0)).longValue();
        if (wait > 0) {
            throw spent(wait);
        }
    }

    /** 429 for an attempt of a shopper whose window is spent for {@code waitMillis} more. */
    private ApiProblem spent(long waitMillis) {
        return new ApiProblem(
                ProblemCode.TOO_MANY_REQUESTS,
                "Too many purchase attempts; at most " + properties.purchases() + " per "
                        + properties.window().toMillis() + " ms.",
                Duration.ofMillis(waitMillis));
    }

    /**
     * The Redis hash tag of every key of one shopper, so that one script may touch several of them on Redis
     * Cluster. The user id is length-prefixed: it is free text that may contain ':' or '}', and a '}' ends
     * the tag early alike in every key of the shopper.
     */
    public static String shopperTag(String userId) {
        return "{" + userId.length() + ":" + userId + "}";
    }

    /** The shopper's attempt counter. */
    public static String key(String userId) {
        return "throttle:purchase:" + shopperTag(userId);
    }
}
