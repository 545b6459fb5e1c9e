package dev.flashsale.common.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The one way to load a Lua script ({@code redis/NAME.lua} on the class path), and to run one that answers
 * strings through the template. Every script is loaded with {@code redis/shared.lua} before it: a script
 * cannot call another, and what several scripts share (the format of a reservation's record, Redis's clock)
 * is written there once.
 */
public final class LuaScripts {

    private static final String SHARED = text("shared");

    private LuaScripts() {}

    /**
     * The script, its text read once. A script built from a Resource re-checks the resource's modification
     * time before every call (inside a jar: a failed file lookup and an exception per call), which cost
     * the purchase path more CPU than the Redis call itself.
     */
    public static <T> RedisScript<T> load(String name, Class<T> resultType) {
        return RedisScript.of(SHARED + text(name), resultType);
    }

    private static String text(String name) {
        String path = "redis/" + name + ".lua";
        try {
            return new ClassPathResource(path).getContentAsString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Lua script " + path + " is missing", e);
        }
    }

    /**
     * Runs a script that answers an array of strings through the template, with its timed wait (the
     * reservation every purchase makes goes through {@link ScriptCalls} instead). Throws when it answered
     * nothing.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static List<String> run(
            StringRedisTemplate redis, RedisScript<List> script, List<String> keys, String... args) {
        List result = redis.execute(script, keys, (Object[]) args);
        if (result == null || result.isEmpty()) {
            throw new IllegalStateException("script " + script.getSha1() + " returned nothing");
        }
        return (List<String>) result;
    }
}
