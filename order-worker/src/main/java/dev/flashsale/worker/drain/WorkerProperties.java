package dev.flashsale.worker.drain;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.worker.*: how the worker drains the order queue. Prefetch, batch size and concurrency are the
 * listener container's own settings (spring.rabbitmq.listener.simple.*).
 *
 * @param maxAttempts attempts at writing an order, each after app.messaging.retry-delay, before it becomes
 *     FAILED and is dead-lettered
 * @param receiveTimeout how long a consumer waits for one more message before it writes a partial batch
 * @param batchReceiveTimeout longest time a consumer spends gathering one batch: a steady trickle of messages
 *     (each arriving within the receive timeout) would otherwise hold the first one until the batch is full
 * @param shutdownTimeout how long a stopping consumer may take to finish, commit and ack its batch
 * @param confirmTimeout longest wait for the broker to confirm a retry copy before the original is requeued
 * @param requeueBackoff pause before requeueing a message whose retry could not be published
 */
@ConfigurationProperties("app.worker")
record WorkerProperties(
        @DefaultValue("24") int maxAttempts,
        @DefaultValue("50ms") Duration receiveTimeout,
        @DefaultValue("100ms") Duration batchReceiveTimeout,
        @DefaultValue("25s") Duration shutdownTimeout,
        @DefaultValue("5s") Duration confirmTimeout,
        @DefaultValue("1s") Duration requeueBackoff) {

    WorkerProperties {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("app.worker.max-attempts must be at least 1");
        }
        if (receiveTimeout.isNegative()
                || receiveTimeout.isZero()
                || batchReceiveTimeout.isNegative()
                || batchReceiveTimeout.isZero()
                || shutdownTimeout.isNegative()
                || confirmTimeout.isNegative()
                || confirmTimeout.isZero()
                || requeueBackoff.isNegative()) {
            throw new IllegalArgumentException("app.worker timeouts must be positive");
        }
    }
}
