package dev.flashsale.common.messaging;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.messaging.link.*: how long a broker that takes bytes but answers nothing (a host gone without a reset, a
 * blackholed link) may hold a connection's opening or a channel's call. The AMQP client waits 10 s for a new
 * connection's handshake and 10 min for a channel's call (opening a channel, confirm.select), where only the
 * heartbeat (about 20 s) ends the wait. Values and reasons: docs/operations.md#timeouts-and-heartbeats.
 *
 * @param handshakeTimeout longest wait for a new connection's AMQP handshake, once the TCP connection is open
 * @param channelRpcTimeout longest wait for the answer to a channel's call
 */
@ConfigurationProperties("app.messaging.link")
public record BrokerLinkProperties(
        @DefaultValue("3s") Duration handshakeTimeout,
        @DefaultValue("3s") Duration channelRpcTimeout) {

    public BrokerLinkProperties {
        if (handshakeTimeout.toMillis() < 100 || channelRpcTimeout.toMillis() < 100) {
            throw new IllegalArgumentException("app.messaging.link: timeouts of at least 100 ms");
        }
    }
}
