package dev.flashsale.common.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Keys, fields and arguments as Redis's binary commands take them: UTF-8, the encoding the
 * {@code StringRedisTemplate} uses for the same strings, so a key written through one is found through the other.
 */
public final class RedisBytes {

    private RedisBytes() {}

    public static byte[] of(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    public static byte[][] of(List<String> values) {
        byte[][] encoded = new byte[values.size()][];
        for (int i = 0; i < encoded.length; i++) {
            encoded[i] = of(values.get(i));
        }
        return encoded;
    }
}
