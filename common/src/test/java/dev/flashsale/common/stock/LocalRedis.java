package dev.flashsale.common.stock;

import java.util.Arrays;
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

    static boolean onCluster() {
        return Arrays.asList(System.getProperty("spring.profiles.include", "").split(","))
                .contains("redis-cluster");
    }
}
