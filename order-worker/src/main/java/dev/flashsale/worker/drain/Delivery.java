package dev.flashsale.worker.drain;

import dev.flashsale.common.order.OrderRequested;
import org.springframework.amqp.core.Message;

/** A decoded message: the order it carries, and which attempt at writing it this delivery is (from 1). */
record Delivery(Message message, OrderRequested order, int attempt) {

    long tag() {
        return message.getMessageProperties().getDeliveryTag();
    }
}
