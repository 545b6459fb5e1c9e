package dev.flashsale.common.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import java.time.Duration;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * How every Lettuce connection, both applications', finds out that its Redis went silent. Lettuce's defaults
 * leave a dead peer to the kernel: keep-alive off (and when on, it probes only an idle socket) and no TCP
 * user timeout, so a socket with unacknowledged writes lives until {@code tcp_retries2} gives up, about 15
 * minutes, while every command on it times out. Here a dead peer is dropped by the kernel within seconds
 * (keep-alive for an idle socket, the TCP user timeout for one with writes unacknowledged; both need netty's
 * epoll or io_uring transport, decision 0007, and are ignored on NIO), a peer that acknowledges but answers
 * nothing by {@link UnansweredWrites}; Lettuce's reconnect, which behind Sentinel asks for the master again,
 * takes over. Values and reasons: docs/operations.md#timeouts-and-heartbeats.
 */
@Configuration(proxyBeanMethods = false)
public class RedisLink {

    @Bean
    LettuceClientOptionsBuilderCustomizer deadPeerSocketOptions(RedisLinkProperties link) {
        return options -> options.socketOptions(socketOptions(options.build(), link));
    }

    @Bean
    ClientResourcesBuilderCustomizer silentPeerWatch(RedisLinkProperties link, DataRedisProperties redis) {
        Duration timeout = redis.getTimeout();
        if (timeout != null && link.silence().compareTo(timeout) <= 0) {
            // A command still inside its timeout would be cut off with its whole connection.
            throw new IllegalStateException("app.redis.link.silence (" + link.silence()
                    + ") must exceed spring.data.redis.timeout (" + timeout + ")");
        }
        long silence = link.silence().toNanos();
        return resources -> resources.nettyCustomizer(new NettyCustomizer() {
            @Override
            public void afterChannelInitialized(Channel channel) {
                channel.pipeline().addFirst(new UnansweredWrites(silence));
            }
        });
    }

    /** Boot's socket options (its connect timeout) with keep-alive and the TCP user timeout added. */
    static SocketOptions socketOptions(ClientOptions current, RedisLinkProperties link) {
        return current.getSocketOptions()
                .mutate()
                .keepAlive(SocketOptions.KeepAliveOptions.builder()
                        .enable()
                        .idle(link.keepAliveIdle())
                        .interval(link.keepAliveInterval())
                        .count(link.keepAliveCount())
                        .build())
                .tcpUserTimeout(SocketOptions.TcpUserTimeoutOptions.builder()
                        .enable()
                        .tcpUserTimeout(link.tcpUserTimeout())
                        .build())
                .build();
    }
}
