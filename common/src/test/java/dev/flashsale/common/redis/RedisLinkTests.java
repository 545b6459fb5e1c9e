package dev.flashsale.common.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.flashsale.common.support.DeadPeerSockets;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;

class RedisLinkTests {

    private static RedisLinkProperties link(Duration silence) {
        return new RedisLinkProperties(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(1), 3, silence);
    }

    @Test
    void the_client_options_gain_keep_alive_and_a_tcp_user_timeout_and_keep_the_connect_timeout() {
        ClientOptions.Builder options = ClientOptions.builder()
                .socketOptions(SocketOptions.builder()
                        .connectTimeout(Duration.ofSeconds(2))
                        .build());

        new RedisLink().deadPeerSocketOptions(link(Duration.ofSeconds(3))).customize(options);
        SocketOptions socket = options.build().getSocketOptions();

        assertThat(socket.getConnectTimeout()).isEqualTo(Duration.ofSeconds(2));
        DeadPeerSockets.assertWatched(socket);
    }

    @Test
    void a_silence_within_the_command_timeout_is_refused_at_start_up() {
        DataRedisProperties redis = new DataRedisProperties();
        redis.setTimeout(Duration.ofSeconds(3));

        assertThatThrownBy(() -> new RedisLink().silentPeerWatch(link(Duration.ofSeconds(3)), redis))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("must exceed spring.data.redis.timeout");
    }
}
