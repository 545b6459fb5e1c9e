package dev.flashsale.worker.drain;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.List;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.stereotype.Component;

/**
 * Receives the order queue in batches (prefetch, batch size and concurrency from
 * spring.rabbitmq.listener.simple.*) and acks by hand, after the batch's transaction committed.
 */
@Component
class OrderListener {

    private final OrderDrain drain;

    OrderListener(OrderDrain drain) {
        this.drain = drain;
    }

    @RabbitListener(id = "order-drain", queues = "${app.messaging.queue}")
    void onOrders(List<Message> messages, Channel channel) throws IOException {
        for (Disposition disposition : drain.drain(messages)) {
            disposition.applyTo(channel);
        }
    }
}
