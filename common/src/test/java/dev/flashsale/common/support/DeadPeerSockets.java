package dev.flashsale.common.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.SocketOptions;
import java.time.Duration;

/** What a Redis connection needs to notice a peer that died without a word, with RedisLink's defaults. */
public final class DeadPeerSockets {

    private DeadPeerSockets() {}

    /** TCP keep-alive after 5 s idle, every 1 s, 3 probes; and a TCP user timeout of 5 s. */
    public static void assertWatched(SocketOptions socket) {
        assertThat(socket.isKeepAlive()).isTrue();
        assertThat(socket.getKeepAlive().getIdle()).isEqualTo(Duration.ofSeconds(5));
        assertThat(socket.getKeepAlive().getInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(socket.getKeepAlive().getCount()).isEqualTo(3);
        assertThat(socket.isEnableTcpUserTimeout()).isTrue();
        assertThat(socket.getTcpUserTimeout().getTcpUserTimeout()).isEqualTo(Duration.ofSeconds(5));
    }
}
