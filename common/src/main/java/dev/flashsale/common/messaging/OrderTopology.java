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
 *       backlog waits instead of silently expiring; rejected messages, and messages delivered
 *       {@code deliveryLimit} times, go to the dead-letter exchange.
 *   <li>{@code retryExchange} → {@code retryQueue}: a quorum queue too, holding a message for
 *       {@code retryDelay}; then its own dead-lettering routes it back to {@code queue}: a delayed retry,
 *       never a hot requeue loop.
 *   <li>{@code deadLetterExchange} → {@code deadLetterQueue}: poison messages and exhausted retries.
 * </ul>
 *
 * <p>Dead-lettering out of both quorum queues is at-least-once (it needs {@code reject-publish} overflow):
 * a message leaves only once the target queue confirmed it, so neither a retry nor a poison message is
 * lost between two queues. The worker is idempotent by order id, so a duplicate costs nothing. A broker
 * that ran an older version of this topology refuses the changed arguments: delete the two queues once
 * drained (docs/operations.md#upgrading-the-queue-topology).
 */
@Configuration(proxyBeanMethods = false)
public class OrderTopology {

    @Bean
    Declarables orderQueues(MessagingProperties names) {
        DirectExchange orders = new DirectExchange(names.exchange(), true, false);
        Queue requested = QueueBuilder.durable(names.queue())
                .quorum()
                .deliveryLimit(names.deliveryLimit())
                .deadLetterExchange(names.deadLetterExchange())
                .withArgument("x-dead-letter-strategy", "at-least-once")
                .overflow(QueueBuilder.Overflow.rejectPublish)
                .build();
        DirectExchange retry = new DirectExchange(names.retryExchange(), true, false);
        Queue retryQueue = QueueBuilder.durable(names.retryQueue())
                .quorum()
                .ttl((int) names.retryDelay().toMillis())
                .deadLetterExchange(names.exchange())
                .deadLetterRoutingKey(names.queue())
                .withArgument("x-dead-letter-strategy", "at-least-once")
                .overflow(QueueBuilder.Overflow.rejectPublish)
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
