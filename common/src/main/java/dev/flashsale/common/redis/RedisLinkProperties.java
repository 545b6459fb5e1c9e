package dev.flashsale.common.redis;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.redis.link.*: how fast a Redis peer that went silent (a host gone without a reset, a proxy that
 * swallows traffic) is given up, so that Lettuce connects anew and, behind Sentinel, asks for the master
 * again. Values and reasons: docs/operations.md#timeouts-and-heartbeats.
 *
 * @param tcpUserTimeout longest time written data may stay unacknowledged before the kernel drops the
 *     socket (TCP_USER_TIMEOUT; epoll or io_uring only); it also ends a keep-alive probe round
 * @param keepAliveIdle idle time before the first keep-alive probe (an idle socket has no data to go
 *     unacknowledged)
 * @param keepAliveInterval time between probes
 * @param keepAliveCount unanswered probes before the socket is dropped
 * @param silence longest time a connection may go without a byte from its peer while a command awaits its
 *     answer, before it is closed and Lettuce reconnects: the peer takes the bytes but answers nothing. Above
 *     the command timeout ({@code spring.data.redis.timeout}), so that a slow answer is not taken for silence
 */
@ConfigurationProperties("app.redis.link")
public record RedisLinkProperties(
        @DefaultValue("5s") Duration tcpUserTimeout,
        @DefaultValue("5s") Duration keepAliveIdle,
        @DefaultValue("1s") Duration keepAliveInterval,
        @DefaultValue("3") int keepAliveCount,
        @DefaultValue("3s") Duration silence) {

    public RedisLinkProperties {
        if (tcpUserTimeout.toSeconds() < 1
                || keepAliveIdle.toSeconds() < 1
                || keepAliveInterval.toSeconds() < 1
                || keepAliveCount < 1
                || silence.toMillis() < 100) {
            throw new IllegalArgumentException(
                    "app.redis.link: socket timeouts of at least 1 s, a keep-alive count of at least 1, a silence of at least 100 ms");
        }
    }
}
