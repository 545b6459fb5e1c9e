package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.support.DeadPeerSockets;
import dev.flashsale.common.support.SilentPeer;
import io.lettuce.core.SocketOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Issue 38, finding 1: a Redis that goes silent without a reset. The API reaches Redis through a
 * {@link SilentPeer}; silenced, every open connection swallows what it is sent and answers nothing, while
 * a new connection reaches a healthy Redis (the address moved on, as Sentinel's promotion moves the
 * master). Before, the shared connection kept writing into the silent one and every purchase answered 503
 * until the kernel gave up (about 15 minutes; here the kernel never does, the peer acknowledges every byte);
 * now a connection that got no answer for {@code app.redis.link.silence} (3 s) is closed and Lettuce
 * reconnects. The socket options, which drop a peer whose host is gone, cannot be exercised on loopback:
 * the first test shows they are set.
 */
class SilentRedisIntegrationTests extends ApiIntegrationTest {

    /** The bound: purchases succeed again within 15 s of the master's silent death. */
    private static final Duration BOUND = Duration.ofSeconds(15);

    private static SilentPeer peer;

    @DynamicPropertySource
    static void throughTheSilentPeer(DynamicPropertyRegistry registry) {
        peer = SilentPeer.before(Integer.parseInt(System.getenv().getOrDefault("REDIS_PORT", "6379")));
        registry.add("spring.data.redis.port", peer::port);
    }

    @AfterAll
    static void closePeer() throws Exception {
        peer.close();
    }

    @Autowired
    LettuceConnectionFactory connections;

    @BeforeEach
    void syncMode() {
        api.setMode("SYNC");
    }

    @Test
    void every_connection_has_keep_alive_and_a_tcp_user_timeout() {
        SocketOptions socket = connections
                .getClientConfiguration()
                .getClientOptions()
                .orElseThrow()
                .getSocketOptions();

        DeadPeerSockets.assertWatched(socket);
        assertThat(socket.getConnectTimeout())
                .as("Boot's connect timeout is kept")
                .isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void purchases_succeed_again_within_the_bound_after_redis_went_silent() throws Exception {
        int stock = 500;
        long sale = api.createSale(stock, 1);
        Api.Response before = api.purchase(sale, "before-" + sale, 1);
        assertThat(before.status()).as(before.toString()).isEqualTo(201);

        peer.silence();
        Recovery recovery = purchasesUntilOneSucceeds(sale, System.nanoTime(), BOUND.plusSeconds(5));

        recovery.assertWithin(BOUND, "while Redis was silent nothing was sold: 503, nothing reserved");
        // What the silent connection swallowed never reached Redis: nothing is held, nothing oversold.
        assertThat(pgConfirmedOrders(sale)).isEqualTo(2);
        assertThat(redisRemaining(sale)).isEqualTo(stock - 2);
        assertThat(pgRemaining(sale)).isEqualTo(stock - 2);
    }
}
