package dev.flashsale.common.stock;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** A connection to the real local Redis the tests share (scripts/services.sh up; REDIS_HOST, REDIS_PORT). */
final class LocalRedis {

    private LocalRedis() {}

    static LettuceConnectionFactory connect() {
        LettuceConnectionFactory connections = new LettuceConnectionFactory(new RedisStandaloneConfiguration(
                System.getenv().getOrDefault("REDIS_HOST", "127.0.0.1"),
                Integer.parseInt(System.getenv().getOrDefault("REDIS_PORT", "6379"))));
        connections.afterPropertiesSet();
        return connections;
    }
}
