package dev.flashsale.common.stock;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/** app.redis.*: how long reservation records and order index entries live in Redis. */
@ConfigurationProperties("app.redis")
public record StockProperties(@DefaultValue("7d") Duration orderTtl) {}
