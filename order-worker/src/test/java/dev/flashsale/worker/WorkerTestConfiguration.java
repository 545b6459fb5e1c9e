package dev.flashsale.worker;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderRequestedCodec;
import dev.flashsale.common.stock.SaleStock;
import dev.flashsale.common.stock.StockLedger;
import org.flywaydb.core.Flyway;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/** What a worker test adds: the schema (migrated here, as the API would), the fixture, the clean-up. */
@TestConfiguration(proxyBeanMethods = false)
public class WorkerTestConfiguration {

    /** In production the API migrates; here nobody else may have, so the test does it. */
    @Bean
    @Primary
    FlywayMigrationStrategy migrateForTests() {
        return Flyway::migrate;
    }

    @Bean
    Shop shop(
            JdbcClient jdbc,
            StockLedger ledger,
            SaleStock stock,
            StringRedisTemplate redis,
            RabbitTemplate rabbit,
            OrderRequestedCodec codec,
            MessagingProperties names) {
        return new Shop(jdbc, ledger, stock, redis, rabbit, codec, names);
    }

    @Bean
    IsolatedTopology isolatedTopology(AmqpAdmin admin, MessagingProperties names) {
        return new IsolatedTopology(admin, names);
    }
}
