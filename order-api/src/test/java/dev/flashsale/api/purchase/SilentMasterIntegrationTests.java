package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.common.support.PrivateSentinel;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Issue 38, finding 1, with Sentinel: the master dies without a word (SIGSTOP: its kernel still
 * acknowledges every byte, nothing is closed) and the Sentinel promotes the replica. The API, on the
 * redis-sentinel profile's settings, must drop its connections to the silent master and ask the Sentinel
 * again: purchases succeed again within the bound, 15 s. Before, Lettuce kept writing to the frozen
 * master and every purchase answered 503 for as long as it stayed frozen.
 */
class SilentMasterIntegrationTests extends ApiIntegrationTest {

    private static final Duration BOUND = Duration.ofSeconds(15);
    private static final PrivateSentinel REDIS = PrivateSentinel.start(6386, 6387, 26386);

    @DynamicPropertySource
    static void behindSentinel(DynamicPropertyRegistry registry) {
        REDIS.register(registry);
    }

    @AfterAll
    static void stop() throws Exception {
        REDIS.close();
    }

    @Test
    void purchases_succeed_again_within_the_bound_after_the_master_died_silently_and_sentinel_promoted_a_replica()
            throws Exception {
        api.setMode("SYNC");
        int stock = 100;
        long sale = api.createSale(stock, 1);
        Api.Response before = api.purchase(sale, "before-" + sale, 1);
        assertThat(before.status()).as(before.toString()).isEqualTo(201);
        REDIS.replicated();

        REDIS.freezeMaster();
        Recovery recovery = purchasesUntilOneSucceeds(sale, System.nanoTime(), BOUND.plusSeconds(10));

        recovery.assertWithin(BOUND, "nothing sold while no master answered");
        assertThat(REDIS.namedMaster()).isEqualTo(Integer.toString(REDIS.replicaPort()));
        assertThat(pgConfirmedOrders(sale)).isEqualTo(2);
        assertThat(pgRemaining(sale)).isEqualTo(stock - 2);
        assertThat(redisRemaining(sale)).as("read from the promoted master").isEqualTo(stock - 2);
    }
}
