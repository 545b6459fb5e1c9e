package dev.flashsale.worker.reconcile;

import java.time.Duration;
import org.springframework.amqp.rabbit.listener.AsyncConsumerStoppedEvent;
import org.springframework.amqp.rabbit.listener.ConsumeOkEvent;
import org.springframework.amqp.rabbit.listener.ListenerContainerConsumerFailedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * How long this worker has been consuming the queues without a break, from the broker's consume-ok. A
 * message whose worker died goes back to its queue and is claimed again by the next consumer; until this
 * worker has consumed for a hand-off timeout, a claim older than that bound may be such a message, not one
 * the broker dead-lettered (issue 27, path 2: the restarted worker's reconciler closed the order its dead
 * predecessor held, FAILED, before the redelivery reached it).
 */
@Component
class Consuming {

    private static final long NOT_CONSUMING = Long.MIN_VALUE;

    private volatile long sinceNanos = NOT_CONSUMING;

    @EventListener
    void consumeOk(ConsumeOkEvent event) {
        if (sinceNanos == NOT_CONSUMING) {
            sinceNanos = System.nanoTime();
        }
    }

    @EventListener
    void stopped(AsyncConsumerStoppedEvent event) {
        sinceNanos = NOT_CONSUMING;
    }

    @EventListener
    void failed(ListenerContainerConsumerFailedEvent event) {
        sinceNanos = NOT_CONSUMING;
    }

    /** Zero while not consuming. */
    Duration duration() {
        long since = sinceNanos;
        return since == NOT_CONSUMING ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - since);
    }
}
