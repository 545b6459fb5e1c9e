package dev.flashsale.api.throttle;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.common.redis.LuaScripts;
import dev.flashsale.common.redis.ScriptCalls;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The first defence against a bot hammering a sale: each shopper may attempt {@code app.throttle.purchases}
 * purchases per {@code app.throttle.window}, counted in Redis (a fixed window, one script call), so the
 * limit holds however many API instances share the load. Beyond it: 429 with Retry-After, before anything
 * is reserved. An attempt with an Idempotency-Key binds the key in the same script call, one round trip
 * instead of two on the purchase path: the shopper's keys share a hash tag ({@link #shopperTag}).
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

    PurchaseThrottle(StringRedisTemplate redis, ThrottleProperties properties) {
        this.scripts = new ScriptCalls(redis);
        this.properties = properties;
        this.windowMillis = Long.toString(properties.window().toMillis());
        this.limit = Integer.toString(properties.purchases());
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
        refuseIfSpent(verdict);
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
        refuseIfSpent(verdict);
        return verdict.size() > 1 && verdict.get(1) instanceof String stored ? stored : null;
    }

    private void refuseIfSpent(List<?> verdict) {
        long wait = verdict.isEmpty() ? 0 : ((Number) verdict.get(0)).longValue();
        if (wait > 0) {
            throw new ApiProblem(
                    ProblemCode.TOO_MANY_REQUESTS,
                    "Too many purchase attempts; at most " + properties.purchases() + " per "
                            + properties.window().toMillis() + " ms.",
                    Duration.ofMillis(wait));
        }
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
