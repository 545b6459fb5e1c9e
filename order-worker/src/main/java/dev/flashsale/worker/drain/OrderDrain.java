package dev.flashsale.worker.drain;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderRequestedCodec;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.OrderStore.Placement;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import dev.flashsale.worker.FailedOrders;
import dev.flashsale.worker.PostgresTimeouts;
import dev.flashsale.worker.drain.DrainMetrics.DeadLetterReason;
import dev.flashsale.worker.drain.DrainMetrics.Outcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Drains one batch of order messages as a group commit: one claim script per sale takes the reservations
 * over, one transaction writes every claimed order (one insert, one guarded stock update per sale), and
 * one settle script per sale ends the holds once it committed. Then it tells the listener how to settle
 * each delivery with the broker. Never throws: every message ends in exactly one {@link Disposition}.
 *
 * <p>Everything here is idempotent by order id, so a redelivery, a duplicate or a second worker running
 * the same message changes nothing: the claim and the settlement are compare-and-set scripts, and the
 * insert does nothing for an order that exists.
 */
@Service
class OrderDrain {

    private static final Logger log = LoggerFactory.getLogger(OrderDrain.class);

    private static final Set<ReservationState> CLAIMABLE =
            EnumSet.of(ReservationState.RESERVED, ReservationState.PUBLISHED);

    /** Rows are locked in one order by every worker, so that two batches rarely deadlock. */
    private static final Comparator<Delivery> LOCK_ORDER = Comparator.comparingLong(
                    (Delivery delivery) -> delivery.order().saleId())
            .thenComparing(delivery -> delivery.order().orderId());

    private final OrderRequestedCodec codec;
    private final StockLedger ledger;
    private final OrderStore store;
    private final TransactionTemplate transactions;
    private final DelayedRetry retries;
    private final DrainMetrics metrics;
    private final WorkerProperties properties;
    private final FailedOrders failures;

    OrderDrain(
            OrderRequestedCodec codec,
            StockLedger ledger,
            OrderStore store,
            TransactionTemplate transactions,
            DelayedRetry retries,
            DrainMetrics metrics,
            WorkerProperties properties) {
        this.codec = codec;
        this.ledger = ledger;
        this.store = store;
        this.transactions = transactions;
        this.retries = retries;
        this.metrics = metrics;
        this.properties = properties;
        this.failures = new FailedOrders(store, ledger, transactions);
    }

    List<Disposition> drain(List<Message> messages) {
        DrainBatch batch = new DrainBatch(ledger, failures, retries, metrics, properties.maxAttempts());
        try {
            write(claim(decode(messages, batch), batch), batch);
            batch.closeFailed();
        } catch (RuntimeException bug) {
            return afterUnexpected(messages, bug);
        }
        if (batch.requeues()) {
            backOff();
        }
        return batch.dispositions();
    }

    /**
     * Every failure of a store is handled per delivery, so this is a bug: each message gets one more
     * delivery, then goes to the dead-letter queue instead of looping.
     */
    private List<Disposition> afterUnexpected(List<Message> messages, RuntimeException bug) {
        log.error("Unexpected failure draining a batch of {} messages; requeueing them once", messages.size(), bug);
        backOff();
        return messages.stream()
                .map(Message::getMessageProperties)
                .map(properties -> Boolean.TRUE.equals(properties.getRedelivered())
                        ? Disposition.deadLetter(properties.getDeliveryTag())
                        : Disposition.requeue(properties.getDeliveryTag()))
                .toList();
    }

    private List<Delivery> decode(List<Message> messages, DrainBatch batch) {
        List<Delivery> decoded = new ArrayList<>(messages.size());
        for (Message message : messages) {
            MessageProperties properties = message.getMessageProperties();
            try {
                int attempt = DelayedRetry.attemptOf(message);
                for (OrderRequested order : codec.decodeAll(message.getBody(), properties.getContentType())) {
                    decoded.add(new Delivery(message, order, attempt));
                }
            } catch (RuntimeException e) { // MalformedMessageException, or anything else the codec refuses
                log.warn(
                        "Dead-lettering undecodable message {} (delivery tag {}): {}",
                        properties.getMessageId(),
                        properties.getDeliveryTag(),
                        e.getMessage());
                metrics.deadLettered(DeadLetterReason.POISON);
                batch.deadLetter(properties.getDeliveryTag());
            }
        }
        return decoded;
    }

    /** Takes the reservations over from the API, one script call per sale; keeps what still needs writing. */
    private List<Delivery> claim(List<Delivery> deliveries, DrainBatch batch) {
        List<Delivery> claimed = new ArrayList<>(deliveries.size());
        OrderRequested.bySale(deliveries, Delivery::order).forEach((saleId, ofSale) -> {
            List<Transition> claims = batch.attempt(
                    ofSale, () -> ledger.advanceAll(saleId, ids(ofSale), CLAIMABLE, ReservationState.CLAIMED));
            if (claims == null) {
                return;
            }
            for (int i = 0; i < ofSale.size(); i++) {
                Delivery delivery = ofSale.get(i);
                switch (claims.get(i).state()) {
                    // Claimed now, claimed before (a redelivery), or the record expired: Postgres decides.
                    case null -> claimed.add(delivery);
                    case RESERVED, PUBLISHED, CLAIMED, WRITING -> claimed.add(delivery);
                    // The API released it before telling anyone the order exists: there is no order.
                    case RELEASED, REFUSED -> batch.ack(delivery, Outcome.DROPPED);
                    // Already final: Postgres has it (a final state is only set after the commit).
                    case CONFIRMED, REJECTED, FAILED -> batch.ack(delivery, Outcome.DUPLICATE);
                }
            }
        });
        return claimed;
    }

    private void write(List<Delivery> claimed, DrainBatch batch) {
        if (claimed.isEmpty()) {
            return;
        }
        List<Delivery> deliveries = claimed.stream().sorted(LOCK_ORDER).toList();
        List<OrderRequested> orders = deliveries.stream().map(Delivery::order).toList();
        List<Placement> placements;
        try {
            placements = metrics.timeBatchWrite(
                    () -> transactions.execute(status -> store.placeAll(orders, PurchasePath.ASYNC)));
        } catch (RuntimeException batchFailure) {
            log.debug("Batch of {} orders failed, writing them one by one", deliveries.size(), batchFailure);
            if (PostgresTimeouts.isTimeout(batchFailure)) {
                metrics.postgresTimeout();
            }
            if (FailureKind.of(batchFailure) == FailureKind.UNREACHABLE) {
                batch.unreachable(batchFailure);
            }
            // One order the database cannot take must not hold back the others.
            List<Delivery> written = new ArrayList<>();
            List<Placement> writtenPlacements = new ArrayList<>();
            for (Delivery delivery : deliveries) {
                Placement placement = batch.attempt(
                        List.of(delivery),
                        () -> transactions.execute(status -> store.place(delivery.order(), PurchasePath.ASYNC)));
                if (placement != null) {
                    written.add(delivery);
                    writtenPlacements.add(placement);
                }
            }
            settle(written, writtenPlacements, batch);
            return;
        }
        settle(deliveries, placements, batch);
    }

    /**
     * After the commit: ends the holds of confirmed orders (one script call per sale), gives rejected
     * orders' units back.
     */
    private void settle(List<Delivery> deliveries, List<Placement> placements, DrainBatch batch) {
        Map<Delivery, Placement> placed = new IdentityHashMap<>();
        for (int i = 0; i < deliveries.size(); i++) {
            placed.put(deliveries.get(i), placements.get(i));
        }
        List<Delivery> confirmed = deliveries.stream()
                .filter(delivery -> placed.get(delivery).status() == OrderStatus.CONFIRMED)
                .toList();
        List<Delivery> refused = deliveries.stream()
                .filter(delivery -> placed.get(delivery).status() != OrderStatus.CONFIRMED)
                .toList();
        OrderRequested.bySale(confirmed, Delivery::order).forEach((saleId, ofSale) -> {
            if (batch.attempt(ofSale, () -> ledger.settleConfirmed(saleId, ids(ofSale))) != null) {
                ofSale.forEach(delivery -> batch.ack(delivery, outcome(placed.get(delivery))));
            }
        });
        for (Delivery delivery : refused) {
            OrderRequested order = delivery.order();
            Placement placement = placed.get(delivery);
            Boolean settled = batch.attempt(
                    List.of(delivery),
                    () -> ledger.settle(order.saleId(), order.orderId(), placement.status(), placement.failureCode()));
            if (settled != null) {
                batch.ack(delivery, outcome(placement));
            }
        }
    }

    private static Outcome outcome(Placement placement) {
        if (!placement.written() && !OrderStore.IDEMPOTENCY_KEY_REUSED.equals(placement.failureCode())) {
            return Outcome.DUPLICATE;
        }
        return switch (placement.status()) {
            case CONFIRMED -> Outcome.CONFIRMED;
            case REJECTED -> Outcome.REJECTED;
            case QUEUED, FAILED -> Outcome.FAILED;
        };
    }

    private static List<UUID> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(delivery -> delivery.order().orderId()).toList();
    }

    private void backOff() {
        try {
            Thread.sleep(properties.requeueBackoff());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
