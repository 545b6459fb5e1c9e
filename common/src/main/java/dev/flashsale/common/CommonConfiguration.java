package dev.flashsale.common;

import dev.flashsale.common.messaging.BrokerLinkProperties;
import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.redis.RedisLinkProperties;
import dev.flashsale.common.schema.SchemaProperties;
import dev.flashsale.common.stock.StockProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;

/**
 * Imported by both applications: the stock ledger, the order store, the codec, the queue topology, the
 * schema wait, the Redis connections' socket options and the broker connections' timeouts.
 */
@Configuration(proxyBeanMethods = false)
@ComponentScan
@EnableConfigurationProperties({
    BrokerLinkProperties.class,
    MessagingProperties.class,
    RedisLinkProperties.class,
    SchemaProperties.class,
    StockProperties.class
})
public class CommonConfiguration {}
