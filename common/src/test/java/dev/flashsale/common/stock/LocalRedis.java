package dev.flashsale.common.stock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A connection to the real local Redis the tests share (scripts/services.sh up; REDIS_HOST, REDIS_PORT), or,
 * when the build runs the redis-cluster subset (mvn -Predis-cluster, which includes the Spring profile of that
 * name), to the local Redis Cluster (scripts/services.sh up --cluster; REDIS_CLUSTER_NODES).
 */
final class LocalRedis {

    private LocalRedis() {}

    static LettuceConnectionFactory connect() {
        LettuceConnectionFactory connections = onCluster()
                ? new LettuceConnectionFactory(new RedisClusterConfiguration(Arrays.asList(System.getenv()
                        .getOrDefault("REDIS_CLUSTER_NODES", "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
                        .split(","))))
                : new LettuceConnectionFactory(new RedisStandaloneConfiguration(
                        System.getenv().getOrDefault("REDIS_HOST", "127.0.0.1"),
                        Integer.parseInt(System.getenv().getOrDefault("REDIS_PORT", "6379"))));
        connections.afterPropertiesSet();
        return connections;
    }

    /**
     * A sale of 10 units, 2 a shopper, open from a minute before {@code now} for ten minutes, loaded into Redis
     * under a random id in [{@code idsFrom}, {@code idsFrom} + 10^9): a test class's ids do not meet another's.
     */
    static long openSale(SaleStock sales, long idsFrom, Instant now) {
        long sale = idsFrom + ThreadLocalRandom.current().nextLong(1_000_000_000L);
        assertThat(sales.loadSale(sale, 10, 2, now.minusSeconds(60), now.plusSeconds(600)))
                .isTrue();
        return sale;
    }

    static boolean onCluster() {
        return Arrays.asList(System.getProperty("spring.profiles.include", "").split(","))
                .contains("redis-cluster");
    }
}
