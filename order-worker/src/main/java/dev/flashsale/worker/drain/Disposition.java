package dev.flashsale.worker.drain;

import com.rabbitmq.client.Channel;
import java.io.IOException;

/** What the broker is told about one delivery once its batch is done. */
record Disposition(long deliveryTag, Kind kind) {

    enum Kind {
        /** Done with: written, settled, dropped, or handed to the retry queue. */
        ACK,
        /** Rejected without requeue: the quorum queue dead-letters it. */
        DEAD_LETTER,
        /** Back to the queue: even its retry could not be published. */
        REQUEUE
    }

    static Disposition deadLetter(long deliveryTag) {
        return new Disposition(deliveryTag, Kind.DEAD_LETTER);
    }

    static Disposition requeue(long deliveryTag) {
        return new Disposition(deliveryTag, Kind.REQUEUE);
    }

    void applyTo(Channel channel) throws IOException {
        switch (kind) {
            case ACK -> channel.basicAck(deliveryTag, false);
            case DEAD_LETTER -> channel.basicReject(deliveryTag, false);
            case REQUEUE -> channel.basicNack(deliveryTag, false, true);
        }
    }
}
