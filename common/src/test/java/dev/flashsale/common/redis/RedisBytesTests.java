package dev.flashsale.common.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.serializer.StringRedisSerializer;

class RedisBytesTests {

    @Test
    void encodes_a_key_as_the_string_template_does() {
        String key = "{sale:42}:buyers:zoë";
        assertThat(RedisBytes.of(key)).isEqualTo(StringRedisSerializer.UTF_8.serialize(key));
    }

    @Test
    void encodes_a_list_element_by_element_in_order() {
        byte[][] encoded = RedisBytes.of(List.of("remaining", "frozenUntil", "é"));
        assertThat(encoded).hasNumberOfRows(3);
        assertThat(encoded[0]).isEqualTo("remaining".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertThat(encoded[1]).isEqualTo(RedisBytes.of("frozenUntil"));
        assertThat(encoded[2]).containsExactly(0xc3, 0xa9);
    }
}
