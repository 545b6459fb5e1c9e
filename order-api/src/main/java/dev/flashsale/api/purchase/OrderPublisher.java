package dev.flashsale.api.purchase;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderBatch;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderRequestedCodec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.AmqpResourceNotAvailableException;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.stereotype.Component;

/**
 * Publishes a batch of {@link OrderRequested} as one persistent, mandatory message and waits a bounded
 * time for the broker's confirm. Only {@link Outcome#CONFIRMED} means the broker owns the message, and so
 * every order in it.
 */
@Component
class OrderPublisher {

    enum Outcome {
        CONFIRMED,
        /** The broker refused it (nack). */
        NACKED,
        /** No queue took it (mandatory return). */
        RETURNED,
        /** No confirm in time: the message may or may not be in the queue. */
        TIMED_OUT,
        /** No channel was free in time: this instance is overloaded, the broker may be fine. */
        BUSY,
        /** The broker could not be reached. */
        FAILED,
        /** Not sent: the broker blocks publishing (a memory or disk alarm), its confirm would wait for the alarm. */
        BLOCKED
    }

    private final RabbitTemplate rabbit;
    private final OrderRequestedCodec codec;
    private final MessagingProperties names;
    private final PurchaseProperties properties;
    private final Map<Outcome, Timer> confirmTimes = new EnumMap<>(Outcome.class);

    OrderPublisher(
            RabbitTemplate rabbit,
            OrderRequestedCodec codec,
            MessagingProperties names,
            PurchaseProperties properties,
            MeterRegistry meters) {
        this.rabbit = rabbit;
        this.codec = codec;
        this.names = names;
        this.properties = properties;
        for (Outcome outcome : Outcome.values()) {
            confirmTimes.put(
                    outcome,
                    Timer.builder("flashsale.purchase.publish")
                            .description("Publish of a batch of orders until the broker's confirm (or its failure)")
                            .tag("outcome", outcome.name())
                            .publishPercentiles(0.5, 0.99)
                            .register(meters));
        }
    }

    /** Publishes the orders as one message (contract v2, {@link OrderBatch}) under one confirm. */
    Outcome publish(List<OrderRequested> orders) {
        long started = System.nanoTime();
        Outcome outcome = send(new OrderBatch(orders));
        confirmTimes.get(outcome).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        return outcome;
    }

    private Outcome send(OrderBatch batch) {
        String id = OrderIds.next().toString();
        Message message = MessageBuilder.withBody(codec.encode(batch))
                .setContentType(OrderRequestedCodec.BATCH_CONTENT_TYPE)
                .setDeliveryMode(MessageDeliveryMode.PERSISTENT)
                .setMessageId(id)
                .build();
        CorrelationData correlation = new CorrelationData(id);
        try {
            rabbit.send(names.exchange(), names.queue(), message, correlation);
            CorrelationData.Confirm confirm =
                    correlation.getFuture().get(properties.confirmTimeout().toMillis(), TimeUnit.MILLISECONDS);
            if (correlation.getReturned() != null) {
                return Outcome.RETURNED;
            }
            return confirm.ack() ? Outcome.CONFIRMED : Outcome.NACKED;
        } catch (TimeoutException e) {
            return Outcome.TIMED_OUT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.TIMED_OUT;
        } catch (AmqpTimeoutException | AmqpResourceNotAvailableException e) {
            return Outcome.BUSY;
        } catch (AmqpException | ExecutionException e) {
            return Outcome.FAILED;
        }
    }
}
