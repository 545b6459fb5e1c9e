package dev.flashsale.api.purchase;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionBlockedEvent;
import org.springframework.amqp.rabbit.connection.ConnectionUnblockedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Whether the broker blocks this instance's publishes: RabbitMQ sends {@code connection.blocked} when a
 * memory or disk alarm goes off and stops reading from publishing connections until it clears
 * ({@code connection.unblocked}); Spring AMQP's connection factory passes both on as events. A publish sent
 * meanwhile is confirmed only after the alarm, however long, so while blocked the ASYNC path takes no
 * purchase: 503 at once, nothing reserved (under AUTO the purchase takes SYNC).
 */
@Component
class BlockedBroker {

    private static final Logger log = LoggerFactory.getLogger(BlockedBroker.class);

    private volatile @Nullable String reason;

    BlockedBroker(MeterRegistry meters) {
        Gauge.builder("flashsale.broker.blocked", this, broker -> broker.blocked() ? 1 : 0)
                .description("1 while the broker blocks this instance's publishes (a memory or disk alarm)")
                .register(meters);
    }

    boolean blocked() {
        return reason != null;
    }

    @EventListener
    void blocked(ConnectionBlockedEvent event) {
        reason = event.getReason();
        log.warn("the broker blocks publishing ({}): ASYNC purchases are refused until it unblocks", event.getReason());
    }

    @EventListener
    void unblocked(ConnectionUnblockedEvent event) {
        reason = null;
        log.info("the broker unblocked publishing: ASYNC purchases are taken again");
    }
}
