package dev.flashsale.common.messaging;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/** app.messaging.*: names of the order queue topology, so several systems can share one broker. */
@Validated
@ConfigurationProperties("app.messaging")
public record MessagingProperties(
        @DefaultValue("flashsale.orders") String exchange,
        @DefaultValue("flashsale.orders.requested") String queue,
        @DefaultValue("flashsale.orders.retry") String retryExchange,
        @DefaultValue("flashsale.orders.retry") String retryQueue,
        @DefaultValue("flashsale.orders.dlx") String deadLetterExchange,
        @DefaultValue("flashsale.orders.dead") String deadLetterQueue,
        @DefaultValue("5s") Duration retryDelay) {}
