package dev.flashsale.worker;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderRequestedCodec;
import java.time.Duration;
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

/**
 * One order's message sent by a worker (contract v1: one order), the broker's confirm awaited: a failed
 * order's delayed retry, or the reconciler's publication of an order its API left unpublished. A worker writes
 * an order once however many messages carry it, so a copy never makes a second order.
 */
public final class OrderMessages {

    /** The delivery's attempt number, from the second on: a message without it is the first attempt. */
    public static final String ATTEMPT_HEADER = "x-flashsale-attempt";

    private final RabbitTemplate rabbit;
    private final OrderRequestedCodec codec;
    private final MessagingProperties names;
    private final long confirmTimeoutMillis;

    public OrderMessages(
            RabbitTemplate rabbit, OrderRequestedCodec codec, MessagingProperties names, Duration confirmTimeout) {
        this.rabbit = rabbit;
        this.codec = codec;
        this.names = names;
        this.confirmTimeoutMillis = confirmTimeout.toMillis();
    }

    /**
     * Sends the order through {@code exchange} to the order queue as its {@code attempt}, and waits for the
     * broker's confirm.
     *
     * @throws AmqpException when the broker refused it, could not route it, or did not confirm it in time
     */
    public void send(String exchange, OrderRequested order, int attempt) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(OrderRequestedCodec.CONTENT_TYPE);
        properties.setMessageId(order.orderId().toString());
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        if (attempt > 1) {
            properties.setHeader(ATTEMPT_HEADER, attempt);
        }
        CorrelationData correlation = new CorrelationData(order.orderId() + "#" + attempt);
        rabbit.send(exchange, names.queue(), new Message(codec.encode(order), properties), correlation);
        CorrelationData.Confirm confirm = awaitConfirm(correlation);
        if (!confirm.ack()) {
            throw new AmqpException("the broker refused " + correlation.getId() + ": " + confirm.reason());
        }
        ReturnedMessage returned = correlation.getReturned();
        if (returned != null) {
            throw new AmqpException(correlation.getId() + " was unroutable: " + returned.getReplyText());
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
