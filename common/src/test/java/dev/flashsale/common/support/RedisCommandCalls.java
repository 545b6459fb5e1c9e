package dev.flashsale.common.support;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/** What Redis counts of its own work ({@code INFO commandstats}): the tests that assert how many commands a path makes. */
public final class RedisCommandCalls {

    private RedisCommandCalls() {}

    /** Calls of each command Redis ran so far (its scripts' commands included), by lower-case name. */
    public static Map<String, Long> of(StringRedisTemplate redis) {
        Properties stats = redis.execute((RedisCallback<Properties>)
                connection -> connection.serverCommands().info("commandstats"));
        Map<String, Long> calls = new TreeMap<>();
        if (stats != null) {
            stats.forEach((name, value) -> {
                String fields = value.toString();
                calls.put(
                        name.toString().replace("cmdstat_", ""),
                        Long.parseLong(fields.substring("calls=".length(), fields.indexOf(','))));
            });
        }
        return calls;
    }
}
