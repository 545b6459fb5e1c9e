package dev.flashsale.worker;

import dev.flashsale.common.messaging.MessagingProperties;
import java.util.UUID;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.context.SmartLifecycle;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A test class's own queue topology: fresh exchange and queue names, so that test classes, repeated runs
 * and other people's tests on the same broker never see each other's messages. Removed again when the
 * test's context closes, after its listener stopped.
 */
public final class IsolatedTopology implements SmartLifecycle {

    private final AmqpAdmin admin;
    private final MessagingProperties names;
    private volatile boolean running;

    IsolatedTopology(AmqpAdmin admin, MessagingProperties names) {
        this.admin = admin;
        this.names = names;
    }

    /** Registers fresh app.messaging.* names; call it from each test class's @DynamicPropertySource. */
    public static void register(DynamicPropertyRegistry registry) {
        String prefix = "flashsale.test." + UUID.randomUUID().toString().substring(0, 8);
        registry.add("app.messaging.exchange", () -> prefix + ".orders");
        registry.add("app.messaging.queue", () -> prefix + ".requested");
        registry.add("app.messaging.retry-exchange", () -> prefix + ".retry");
        registry.add("app.messaging.retry-queue", () -> prefix + ".retry");
        registry.add("app.messaging.dead-letter-exchange", () -> prefix + ".dlx");
        registry.add("app.messaging.dead-letter-queue", () -> prefix + ".dead");
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        for (String queue : new String[] {names.queue(), names.retryQueue(), names.deadLetterQueue()}) {
            admin.deleteQueue(queue);
        }
        for (String exchange : new String[] {names.exchange(), names.retryExchange(), names.deadLetterExchange()}) {
            admin.deleteExchange(exchange);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops after the listener containers, which would otherwise declare the queues again. */
    @Override
    public int getPhase() {
        return 0;
    }
}
