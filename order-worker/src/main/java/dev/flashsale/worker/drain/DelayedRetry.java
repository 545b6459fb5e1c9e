package dev.flashsale.worker.drain;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderRequestedCodec;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.stereotype.Component;

/**
 * Sends a copy of a message through the retry queue, whose TTL brings it back to the order queue after
 * app.messaging.retry-delay: a delayed retry instead of a hot requeue loop. The copy carries its attempt
 * number, and the original may only be acked once the broker confirmed the copy.
 */
@Component
class DelayedRetry {

    static final String ATTEMPT_HEADER = "x-flashsale-attempt";

    private final RabbitTemplate rabbit;
    private final OrderRequestedCodec codec;
    private final MessagingProperties names;
    private final long confirmTimeoutMillis;

    DelayedRetry(
            RabbitTemplate rabbit, OrderRequestedCodec codec, MessagingProperties names, WorkerProperties properties) {
        this.rabbit = rabbit;
        this.codec = codec;
        this.names = names;
        this.confirmTimeoutMillis = properties.confirmTimeout().toMillis();
    }

    /** The attempt a delivery is: 1 for a message the API published, then whatever its retry copy says. */
    static int attemptOf(Message message) {
        return message.getMessageProperties().getHeader(ATTEMPT_HEADER) instanceof Number attempt
                ? Math.max(1, attempt.intValue())
                : 1;
    }

    /**
     * Publishes the next attempt and waits for the broker's confirm; throws when it did not confirm. The
     * copy carries this one order (contract v1), also when it arrived in a batch with others.
     */
    void schedule(Delivery delivery) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(OrderRequestedCodec.CONTENT_TYPE);
        properties.setMessageId(delivery.order().orderId().toString());
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        properties.setHeader(ATTEMPT_HEADER, delivery.attempt() + 1);
        CorrelationData correlation = new CorrelationData(delivery.order().orderId() + "#" + (delivery.attempt() + 1));
        rabbit.send(
                names.retryExchange(),
                names.queue(),
                new Message(codec.encode(delivery.order()), properties),
                correlation);
        CorrelationData.Confirm confirm = awaitConfirm(correlation);
        if (!confirm.ack()) {
            throw new AmqpException("the broker refused the retry of " + correlation.getId() + ": " + confirm.reason());
        }
        ReturnedMessage returned = correlation.getReturned();
        if (returned != null) {
            throw new AmqpException(
                    "the retry of " + correlation.getId() + " was unroutable: " + returned.getReplyText());
        }
    }

    private CorrelationData.Confirm awaitConfirm(CorrelationData correlation) {
        try {
            return correlation.getFuture().get(confirmTimeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AmqpException("interrupted while waiting for the confirm of " + correlation.getId(), e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AmqpException("no confirm for " + correlation.getId(), e);
        }
    }
}
