package dev.flashsale.api.warmup;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderBatch;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderRequestedCodec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.stereotype.Component;

/** The ASYNC path's publish, rehearsed: a batch message the broker confirms and then drops. */
@Component
class BrokerRehearsal {

    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(5);

    private final RabbitTemplate rabbit;
    private final OrderRequestedCodec codec;
    private final MessagingProperties names;

    BrokerRehearsal(ConnectionFactory connections, OrderRequestedCodec codec, MessagingProperties names) {
        // The application's connection and channel cache, but not mandatory: an unroutable message is
        // dropped by the broker (and still confirmed), instead of returned and logged as unexpected.
        this.rabbit = new RabbitTemplate(connections);
        this.rabbit.setMandatory(false);
        this.codec = codec;
        this.names = names;
    }

    /**
     * One batch message, published as the ASYNC path does and confirmed by the broker, to the orders
     * exchange under a routing key no queue is bound to: the broker drops it. True when confirmed.
     */
    boolean publish(List<OrderRequested> batch) throws InterruptedException {
        String id = OrderIds.next().toString();
        Message message = MessageBuilder.withBody(codec.encode(new OrderBatch(batch)))
                .setContentType(OrderRequestedCodec.BATCH_CONTENT_TYPE)
                .setDeliveryMode(MessageDeliveryMode.PERSISTENT)
                .setMessageId(id)
                .build();
        CorrelationData correlation = new CorrelationData(id);
        rabbit.send(names.exchange(), "warmup." + id, message, correlation);
        try {
            return correlation
                    .getFuture()
                    .get(CONFIRM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .ack();
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }
}
