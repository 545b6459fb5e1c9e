package dev.flashsale.worker.reconcile;

import dev.flashsale.common.messaging.MessagingProperties;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.stereotype.Component;

/**
 * Whether an order's message may still be in flight: the order queue or the retry queue holds messages.
 * A reservation past its hand-off timeout whose order Postgres does not have may still be finished by such
 * a message (a record left RESERVED after the broker confirmed it, a retry copy whose CLAIMED to PUBLISHED
 * mark failed), so it is closed only once both queues have stood empty for {@code queues-quiet}. A message a
 * worker has taken but not acked is not counted by the broker; by then the worker has claimed it (dated
 * anew), and the quiet period outlasts a batch that has not.
 *
 * <p>One passive declare per queue, at most once a second, however many reservations a pass asks about. A
 * broker that does not answer counts as holding messages: the decision waits, it is never guessed.
 */
@Component
class Queues {

    private static final Logger log = LoggerFactory.getLogger(Queues.class);

    private static final long READ_EVERY_NANOS = Duration.ofSeconds(1).toNanos();

    private static final long NEVER = Long.MIN_VALUE;

    private final AmqpAdmin admin;
    private final MessagingProperties names;
    private long readAt = NEVER;
    private long emptySince = NEVER;

    Queues(AmqpAdmin admin, MessagingProperties names) {
        this.admin = admin;
        this.names = names;
    }

    /** Whether both queues have stood empty for at least {@code bound}, as far as this worker has looked. */
    synchronized boolean quietFor(Duration bound) {
        long now = System.nanoTime();
        if (readAt == NEVER || now - readAt >= READ_EVERY_NANOS) {
            readAt = now;
            boolean empty = isEmpty(names.queue()) && isEmpty(names.retryQueue());
            if (!empty) {
                emptySince = NEVER;
            } else if (emptySince == NEVER) {
                emptySince = now;
            }
        }
        return emptySince != NEVER && now - emptySince >= bound.toNanos();
    }

    private boolean isEmpty(String queue) {
        try {
            QueueInformation info = admin.getQueueInfo(queue);
            // A queue that does not exist holds nothing.
            return info == null || info.getMessageCount() == 0;
        } catch (RuntimeException e) {
            log.debug("Queue {} not read: {}", queue, e.toString());
            return false;
        }
    }
}
