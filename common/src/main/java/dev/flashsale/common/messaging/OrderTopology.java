package dev.flashsale.common.messaging;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The order queue topology, declared by whoever connects first.
 *
 * <ul>
 *   <li>{@code exchange} → {@code queue}: a quorum queue (replicated, durable) with no message TTL, so a
 *       backlog waits instead of silently expiring; rejected messages go to the dead-letter exchange.
 *   <li>{@code retryExchange} → {@code retryQueue}: holds a message for {@code retryDelay}, then its own
 *       dead-lettering routes it back to {@code queue}: a delayed retry, never a hot requeue loop.
 *   <li>{@code deadLetterExchange} → {@code deadLetterQueue}: poison messages and exhausted retries.
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
public class OrderTopology {

    @Bean
    Declarables orderQueues(MessagingProperties names) {
        DirectExchange orders = new DirectExchange(names.exchange(), true, false);
        Queue requested = QueueBuilder.durable(names.queue())
                .quorum()
                .deadLetterExchange(names.deadLetterExchange())
                .build();
        DirectExchange retry = new DirectExchange(names.retryExchange(), true, false);
        Queue retryQueue = QueueBuilder.durable(names.retryQueue())
                .ttl((int) names.retryDelay().toMillis())
                .deadLetterExchange(names.exchange())
                .deadLetterRoutingKey(names.queue())
                .build();
        FanoutExchange deadLetters = new FanoutExchange(names.deadLetterExchange(), true, false);
        Queue dead = QueueBuilder.durable(names.deadLetterQueue()).quorum().build();
        return new Declarables(
                orders,
                requested,
                bind(requested, orders, names.queue()),
                retry,
                retryQueue,
                bind(retryQueue, retry, names.queue()),
                deadLetters,
                dead,
                BindingBuilder.bind(dead).to(deadLetters));
    }

    private static Binding bind(Queue queue, DirectExchange exchange, String routingKey) {
        return BindingBuilder.bind(queue).to(exchange).with(routingKey);
    }
}
