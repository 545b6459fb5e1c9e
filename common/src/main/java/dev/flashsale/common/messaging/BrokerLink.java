package dev.flashsale.common.messaging;

import org.springframework.boot.amqp.autoconfigure.ConnectionFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Bounds the waits of both applications' AMQP connections on a broker that takes bytes but answers nothing
 * (a host gone without a reset, a blackholed link). The heartbeat (spring.rabbitmq.requested-heartbeat) drops
 * such a connection after about 20 s; until then the client's own defaults let a new connection's handshake
 * wait 10 s and a channel's call (opening a channel, confirm.select) 10 min, on a request or committer
 * thread: the fault drill's broker-blackhole had ASYNC purchases unanswered past 10 s. Values and reasons:
 * docs/operations.md#timeouts-and-heartbeats.
 */
@Configuration(proxyBeanMethods = false)
public class BrokerLink {

    @Bean
    ConnectionFactoryCustomizer silentBrokerTimeouts(BrokerLinkProperties link) {
        return factory -> {
            factory.setHandshakeTimeout(Math.toIntExact(link.handshakeTimeout().toMillis()));
            factory.setChannelRpcTimeout(
                    Math.toIntExact(link.channelRpcTimeout().toMillis()));
        };
    }
}
