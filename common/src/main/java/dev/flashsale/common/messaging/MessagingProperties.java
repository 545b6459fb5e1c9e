package dev.flashsale.common.messaging;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.messaging.*: names of the order queue topology, so several systems can share one broker.
 *
 * @param retryDelay how long a failed order waits in the retry queue before it returns to the order queue
 * @param deliveryLimit deliveries of one message (the first and each requeue) before the order queue
 *     dead-letters it; explicit, because RabbitMQ 4 otherwise applies a default of its own (20)
 */
@Validated
@ConfigurationProperties("app.messaging")
public record MessagingProperties(
        @DefaultValue("flashsale.orders") String exchange,
        @DefaultValue("flashsale.orders.requested") String queue,
        @DefaultValue("flashsale.orders.retry") String retryExchange,
        @DefaultValue("flashsale.orders.retry") String retryQueue,
        @DefaultValue("flashsale.orders.dlx") String deadLetterExchange,
        @DefaultValue("flashsale.orders.dead") String deadLetterQueue,
        @DefaultValue("5s") Duration retryDelay,
        @DefaultValue("20") int deliveryLimit) {

    public MessagingProperties {
        if (deliveryLimit < 1) {
            throw new IllegalArgumentException("app.messaging.delivery-limit must be at least 1");
        }
    }
}
