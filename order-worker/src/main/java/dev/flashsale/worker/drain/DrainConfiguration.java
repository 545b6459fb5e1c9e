package dev.flashsale.worker.drain;

import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The listener container comes from Boot (spring.rabbitmq.listener.simple.*: manual ack, consumer batches,
 * which also make the listener a batch listener); this adds the timings Boot has no property for.
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
}
