package dev.flashsale.common;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.stock.StockProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;

/** Imported by both applications: the stock ledger, the order store, the codec and the queue topology. */
@Configuration(proxyBeanMethods = false)
@ComponentScan
@EnableConfigurationProperties({MessagingProperties.class, StockProperties.class})
public class CommonConfiguration {}
