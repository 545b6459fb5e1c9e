package dev.flashsale.worker.drain;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.worker.OrderMessages;
import org.springframework.amqp.core.Message;
import org.springframework.stereotype.Component;

/**
 * Sends a copy of a message through the retry queue, whose TTL brings it back to the order queue after
 * app.messaging.retry-delay: a delayed retry instead of a hot requeue loop. The copy carries its attempt
 * number, and the original may only be acked once the broker confirmed the copy.
 */
@Component
class DelayedRetry {

    private final OrderMessages messages;
    private final MessagingProperties names;

    DelayedRetry(OrderMessages messages, MessagingProperties names) {
        this.messages = messages;
        this.names = names;
    }

    /** The attempt a delivery is: 1 for a message the API published, then whatever its retry copy says. */
    static int attemptOf(Message message) {
        return message.getMessageProperties().getHeader(OrderMessages.ATTEMPT_HEADER) instanceof Number attempt
                ? Math.max(1, attempt.intValue())
                : 1;
    }

    /**
     * Publishes the next attempt and waits for the broker's confirm; throws when it did not confirm. The
     * copy carries this one order (contract v1), also when it arrived in a batch with others.
     */
    void schedule(Delivery delivery) {
        messages.send(names.retryExchange(), delivery.order(), delivery.attempt() + 1);
    }
}
