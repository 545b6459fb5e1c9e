package dev.flashsale.worker.reconcile;

import dev.flashsale.common.messaging.MessagingProperties;
import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.worker.OrderMessages;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.stereotype.Component;

/**
 * Publishes the ASYNC orders their request left RESERVED past the grace ({@link Settlement#PUBLISH}): the
 * order's message, the broker's confirm, then the record marked PUBLISHED, as the API would have. A copy of a
 * message the broker already holds is harmless: a worker claims and writes an order once. Once the broker
 * refuses or does not confirm one, the pass publishes nothing more (each further try would wait out the same
 * confirm timeout): the next pass tries again.
 */
@Component
class UnpublishedOrders {

    private static final Logger log = LoggerFactory.getLogger(UnpublishedOrders.class);

    private final OrderMessages messages;
    private final MessagingProperties names;
    private final StockLedger ledger;
    private final OrderLookup orders;
    private volatile boolean brokerRefused;

    UnpublishedOrders(OrderMessages messages, MessagingProperties names, StockLedger ledger, OrderLookup orders) {
        this.messages = messages;
        this.names = names;
        this.ledger = ledger;
        this.orders = orders;
    }

    /** A pass begins: the broker is asked again. */
    void passBegins() {
        brokerRefused = false;
    }

    /**
     * Whether the order may be published: not when its shopper holds another order of the sale in Postgres.
     * That is what the API finds when a fresh Idempotency-Key's binding was lost (the key's order is in
     * Postgres): it answers that order and gives the fresh reservation back, which a Redis failure can leave
     * RESERVED. Publishing it would make a second order of one key.
     */
    boolean mayPublish(OrderRequested order) {
        return !orders.holdsAnother(order.userId(), order.saleId(), order.orderId());
    }

    /**
     * Publishes the order and marks its record PUBLISHED, dated anew. False when the broker did not confirm
     * it (or refused one before in this pass). The mark changes nothing if the record left RESERVED
     * meanwhile: its request released it (a worker drops the copy), or a worker claimed it from a message.
     */
    boolean publish(OrderRequested order) {
        if (brokerRefused) {
            return false;
        }
        try {
            messages.send(names.exchange(), order, 1);
        } catch (AmqpException e) {
            brokerRefused = true;
            log.warn(
                    "order {}, left unpublished by its API, could not be published: {}", order.orderId(), e.toString());
            return false;
        }
        ledger.publishedLate(order.saleId(), order.orderId());
        return true;
    }
}
