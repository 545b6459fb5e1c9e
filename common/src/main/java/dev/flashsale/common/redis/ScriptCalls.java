package dev.flashsale.common.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the Lua scripts that every purchase runs on Lettuce's shared connection and waits for the answer
 * without a timer of its own. Spring Data Redis waits on each command with a timeout, and on a virtual
 * thread every timed wait schedules and cancels a task on the JDK's delay scheduler: about 8 % of the API's
 * CPU on the purchase path (docs/results/2026-11-25-crossings.md). The wait is still bounded: Lettuce expires a
 * command Redis does not answer within {@code spring.data.redis.timeout} (Spring Boot enables its
 * {@code TimeoutOptions}), and the call then throws as a template call would have timed out.
 *
 * <p>EVALSHA first, EVAL when Redis has lost its script cache (a restart, {@code SCRIPT FLUSH}), as the
 * template does. The answer is the script's array reply: bulk strings as {@link String}, integers as
 * {@link Long}, nil as null.
 */
public class ScriptCalls {

    private final StringRedisTemplate redis;

    public ScriptCalls(StringRedisTemplate redis) {
        this.redis = redis;
    }

    @SuppressWarnings("unchecked")
    public List<@Nullable Object> run(RedisScript<?> script, List<String> keys, String... args) {
        List<@Nullable Object> reply = redis.execute((RedisCallback<List<@Nullable Object>>) connection -> {
            if (!(connection.getNativeConnection() instanceof RedisClusterAsyncCommands<?, ?> commands)) {
                // Not Lettuce: the template's own call, timed wait and all.
                return (List<@Nullable Object>) redis.execute(script, keys, (Object[]) args);
            }
            return run(
                    (RedisClusterAsyncCommands<byte[], byte[]>) commands,
                    script,
                    RedisBytes.of(keys),
                    RedisBytes.of(List.of(args)));
        });
        return reply == null ? List.of() : reply;
    }

    private static List<@Nullable Object> run(
            RedisClusterAsyncCommands<byte[], byte[]> commands, RedisScript<?> script, byte[][] keys, byte[][] args) {
        try {
            return strings(await(commands.evalsha(script.getSha1(), ScriptOutputType.MULTI, keys, args)));
        } catch (RedisNoScriptException e) {
            return strings(await(
                    commands.eval(RedisBytes.of(script.getScriptAsString()), ScriptOutputType.MULTI, keys, args)));
        }
    }

    /** Untimed: Lettuce's command timeout completes the future exceptionally if Redis does not answer. */
    private static <T> T await(RedisFuture<T> future) {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(true);
            throw new IllegalStateException("interrupted while waiting for Redis", e);
        }
    }

    private static List<@Nullable Object> strings(@Nullable List<?> reply) {
        List<@Nullable Object> answer = new ArrayList<>(reply == null ? 0 : reply.size());
        if (reply != null) {
            for (Object element : reply) {
                answer.add(element instanceof byte[] bulk ? new String(bulk, StandardCharsets.UTF_8) : element);
            }
        }
        return answer;
    }
}
