package dev.flashsale.api.throttle;

import dev.flashsale.api.problem.ApiProblem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * The first defence against a bot hammering a sale: each shopper may attempt {@code app.throttle.purchases}
 * purchases per {@code app.throttle.window}, counted in Redis (a fixed window, one script call), so the
 * limit holds however many API instances share the load. Beyond it: 429 with Retry-After, before anything
 * is reserved.
 */
@Component
public class PurchaseThrottle {

    private static final Logger log = LoggerFactory.getLogger(PurchaseThrottle.class);
    private static final RedisScript<Long> COUNT = RedisScript.of(script(), Long.class);

    private final StringRedisTemplate redis;
    private final ThrottleProperties properties;
    private final String windowMillis;
    private final String limit;

    PurchaseThrottle(StringRedisTemplate redis, ThrottleProperties properties) {
        this.redis = redis;
        this.properties = properties;
        this.windowMillis = Long.toString(properties.window().toMillis());
        this.limit = Integer.toString(properties.purchases());
    }

    /** Counts one purchase attempt of the shopper; throws 429 when the shopper's window is spent. */
    public void admit(String userId) {
        Long wait;
        try {
            wait = redis.execute(COUNT, List.of(key(userId)), windowMillis, limit);
        } catch (RuntimeException e) {
            // Without Redis nothing can be sold anyway: the purchase answers 503 itself.
            log.debug("purchase throttle not counted: {}", e.toString());
            return;
        }
        if (wait != null && wait > 0) {
            throw new ApiProblem(
                    HttpStatus.TOO_MANY_REQUESTS,
                    "TOO_MANY_REQUESTS",
                    "Too many purchase attempts; at most " + properties.purchases() + " per "
                            + properties.window().toMillis() + " ms.",
                    Duration.ofMillis(wait));
        }
    }

    /** Length-prefixed like the Idempotency-Key binding, so no two user ids share a counter. */
    static String key(String userId) {
        return "throttle:purchase:" + userId.length() + ":" + userId;
    }

    private static String script() {
        try {
            return new ClassPathResource("redis/throttle.lua").getContentAsString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Lua script redis/throttle.lua is missing", e);
        }
    }
}
