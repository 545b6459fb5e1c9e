package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.mode.ModeProperties;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Tokens;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What only the cluster can get wrong, on the local Redis Cluster (scripts/services.sh up --cluster): the
 * rebuild watch and the rebuild of sales whose slots live on each of its three masters, and the mode flag
 * another instance sets. Runs in the redis-cluster subset only (mvn -Predis-cluster): its watch looks at
 * every open sale of the shared Postgres every 300 ms, and on the shared Redis it would rebuild sales that
 * other tests, and other people's runs, hold behind on purpose (RedisLossIntegrationTests proves the watch on
 * a Redis of its own).
 */
@Tag("redis-cluster")
@EnabledIfSystemProperty(named = "spring.profiles.include", matches = "(.*,)?redis-cluster(,.*)?")
class RedisClusterIntegrationTests extends ApiIntegrationTest {

    @Autowired
    private ModeProperties mode;

    @Autowired
    private LettuceConnectionFactory connections;

    @DynamicPropertySource
    static void watching(DynamicPropertyRegistry registry) {
        registry.add("test.rebuild.watch-interval", () -> "300ms");
        // Other tests' sales selling now in the shared Postgres have no state on this cluster: left alone.
        registry.add("app.rebuild.recently-sold", () -> "0s");
        registry.add("app.rebuild.freeze", () -> "1s");
    }

    @Test
    void the_api_runs_on_a_cluster_of_three_masters_following_its_topology_with_the_dead_peer_socket_options() {
        assertThat(redis.getRequiredConnectionFactory().getClusterConnection().clusterGetNodes())
                .filteredOn(RedisClusterNode::isMaster)
                .hasSize(3);
        ClientOptions options =
                connections.getClientConfiguration().getClientOptions().orElseThrow();
        assertThat(options).isInstanceOf(ClusterClientOptions.class);
        ClusterTopologyRefreshOptions refresh = ((ClusterClientOptions) options).getTopologyRefreshOptions();
        assertThat(refresh.getAdaptiveRefreshTriggers()).as("adaptive").isNotEmpty();
        assertThat(refresh.isPeriodicRefreshEnabled()).as("periodic").isTrue();
        assertThat(options.getSocketOptions().getKeepAlive().isEnabled()).isTrue();
        assertThat(options.getSocketOptions().getTcpUserTimeout().isEnabled()).isTrue();
    }

    @Test
    void a_script_whose_keys_lie_in_two_slots_is_refused_so_the_subset_catches_one() {
        assertThatThrownBy(() -> redis.execute(
                        RedisScript.of("return 1", Long.class), List.of("{sale:1}:pending", "{sale:2}:pending")))
                .hasStackTraceContaining("CROSSSLOT");
    }

    @Test
    void sales_on_every_master_that_redis_holds_ahead_of_postgres_are_rebuilt_by_the_watch_with_their_holds()
            throws Exception {
        int stock = 20;
        List<Long> sales = salesOnEachMaster(stock);
        for (long sale : sales) {
            assertThat(api.setMode("SYNC").status()).isEqualTo(200);
            for (int i = 0; i < 3; i++) {
                Api.Response bought = api.purchase(sale, "sync-" + sale + "-" + i, 1);
                assertThat(bought.status()).as(bought.toString()).isEqualTo(201);
            }
            // Held in Redis only: no worker drains this test's queue, so Postgres never gets it.
            assertThat(api.setMode("ASYNC").status()).isEqualTo(200);
            Api.Response queued = api.purchase(sale, "async-" + sale, 1);
            assertThat(queued.status()).as(queued.toString()).isEqualTo(202);
            assertThat(redisRemaining(sale)).isEqualTo(stock - 4);
            assertThat(pgRemaining(sale)).isEqualTo(stock - 3);
        }

        // Redis ahead of Postgres, as after a failover to a replica that missed the last writes.
        sales.forEach(sale -> redis.opsForHash().increment("{sale:" + sale + "}", "remaining", 5));

        for (long sale : sales) {
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(redisRemaining(sale))
                            .as("sale %d on slot %d: stock - 3 confirmed - 1 held", sale, slot(sale))
                            .isEqualTo(stock - 4));
        }
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);
        for (long sale : sales) {
            Api.Response after = api.purchaseInLine(sale, "after-" + sale, 1, 10);
            assertThat(after.status()).as(after.toString()).isEqualTo(201);
            assertThat(redisRemaining(sale)).isEqualTo(stock - 5);
        }
    }

    @Test
    void a_mode_another_instance_sets_on_the_cluster_is_followed() {
        assertThat(api.setMode("SYNC").status()).isEqualTo(200);

        redis.opsForHash()
                .putAll(
                        mode.redisKey(),
                        Map.of(
                                "mode", "ASYNC",
                                "changedAt", "2026-11-28T00:00:00Z",
                                "changedBy", "another-instance",
                                "reason", "cluster test"));

        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(
                                api.get("/api/v1/admin/mode", Tokens.admin()).text("changedBy"))
                        .isEqualTo("another-instance"));
        assertThat(api.get("/api/v1/admin/mode", Tokens.admin()).text("mode")).isEqualTo("ASYNC");
    }

    /** New sales until one lives in each third of the slots: on the local cluster, one per master. */
    private List<Long> salesOnEachMaster(int stock) {
        Long[] byThird = new Long[3];
        for (int made = 0; Arrays.asList(byThird).contains(null); made++) {
            assertThat(made).as("sales made to cover three masters").isLessThan(100);
            long sale = api.createSale(stock, 1);
            int third = slot(sale) * 3 / SlotHash.SLOT_COUNT;
            if (byThird[third] == null) {
                byThird[third] = sale;
            }
        }
        return List.of(byThird);
    }

    private static int slot(long sale) {
        return SlotHash.getSlot("{sale:" + sale + "}");
    }
}
