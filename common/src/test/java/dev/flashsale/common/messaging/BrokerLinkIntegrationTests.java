package dev.flashsale.common.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.flashsale.common.support.SilentPeer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A broker that takes bytes but answers nothing (the fault drill's broker-blackhole: toxiproxy's timeout toxic)
 * held ASYNC purchases past the drill's 10 s bound: a new connection waits out the client's 10 s handshake
 * timeout, a channel's call on a connection gone silent waits until the heartbeat drops the connection. With the
 * broker link's timeouts both give up within seconds. Against the shared broker (RABBITMQ_HOST, RABBITMQ_PORT).
 */
class BrokerLinkIntegrationTests {

    private static final Duration LINK_TIMEOUT = Duration.ofSeconds(3);

    /** The link timeout and a second of slack; the AMQP client's defaults take 10 s or more. */
    private static final Duration BOUND = LINK_TIMEOUT.plusSeconds(1);

    private static ConnectionFactory factory(int port) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(InetAddress.getLoopbackAddress().getHostAddress());
        factory.setPort(port);
        factory.setUsername(System.getenv().getOrDefault("RABBITMQ_USER", "flashsale"));
        factory.setPassword(System.getenv().getOrDefault("RABBITMQ_PASSWORD", "flashsale"));
        factory.setConnectionTimeout(2000);
        factory.setRequestedHeartbeat(10);
        new BrokerLink()
                .silentBrokerTimeouts(new BrokerLinkProperties(LINK_TIMEOUT, LINK_TIMEOUT))
                .customize(factory);
        return factory;
    }

    private static int brokerPort() {
        return Integer.parseInt(System.getenv().getOrDefault("RABBITMQ_PORT", "5672"));
    }

    @Test
    void a_broker_that_takes_the_connection_but_never_answers_is_given_up_within_the_handshake_timeout()
            throws Exception {
        // A listener that never accepts: the kernel completes the TCP handshake and takes the bytes, nobody answers.
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ConnectionFactory factory = factory(silent.getLocalPort());
            long started = System.nanoTime();

            assertTimeoutPreemptively(
                    BOUND.plusSeconds(10),
                    () -> assertThatThrownBy(factory::newConnection).isInstanceOf(Exception.class));

            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND);
        }
    }

    @Test
    void a_channel_opened_on_a_connection_gone_silent_fails_within_the_rpc_timeout() throws Exception {
        try (SilentPeer peer = SilentPeer.before(brokerPort())) {
            Connection connection = factory(peer.port()).newConnection("broker-link-test");
            try {
                peer.silence();
                long started = System.nanoTime();

                assertTimeoutPreemptively(
                        BOUND.plusSeconds(30),
                        () -> assertThatThrownBy(connection::createChannel).isInstanceOf(Exception.class));

                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND);
            } finally {
                // Not close(), nor abort() without a timeout: they wait for the silent broker's close-ok until the
                // heartbeat gives up.
                connection.abort(500);
            }
        }
    }
}
