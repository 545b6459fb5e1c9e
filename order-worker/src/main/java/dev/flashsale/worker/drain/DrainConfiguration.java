package dev.flashsale.worker.drain;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderRequestedCodec;
import dev.flashsale.worker.OrderMessages;
import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The listener container comes from Boot (spring.rabbitmq.listener.simple.*: manual ack, consumer batches,
 * which also make the listener a batch listener); this adds the timings Boot has no property for, and the one
 * sender of a worker's own messages (a retry copy, the reconciler's publication), with its confirm timeout.
 */
@Configuration(proxyBeanMethods = false)
class DrainConfiguration {

    @Bean
    ContainerCustomizer<SimpleMessageListenerContainer> drainTimings(WorkerProperties properties) {
        return container -> {
            container.setReceiveTimeout(properties.receiveTimeout().toMillis());
            container.setBatchReceiveTimeout(properties.batchReceiveTimeout().toMillis());
            container.setShutdownTimeout(properties.shutdownTimeout().toMillis());
        };
    }

    @Bean
    OrderMessages orderMessages(
            RabbitTemplate rabbit, OrderRequestedCodec codec, MessagingProperties names, WorkerProperties properties) {
        return new OrderMessages(rabbit, codec, names, properties.confirmTimeout());
    }
}
