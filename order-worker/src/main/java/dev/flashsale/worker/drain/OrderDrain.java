package dev.flashsale.worker.drain;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderRequestedCodec;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.OrderStore.Placement;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import dev.flashsale.worker.drain.DrainMetrics.DeadLetterReason;
import dev.flashsale.worker.drain.DrainMetrics.Outcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Drains one batch of order messages: claims each reservation in Redis, writes every claimed order in one
 * transaction, settles the reservations once it committed, and tells the listener how to settle each
 * delivery with the broker. Never throws: every delivery ends in exactly one {@link Disposition}.
 *
 * <p>Everything here is idempotent by order id, so a redelivery, a duplicate or a second worker running
 * the same message changes nothing: the claim and the settlement are compare-and-set scripts, and the
 * insert does nothing for an order that exists.
 */
@Service
class OrderDrain {

    /** The retry budget ran out while Postgres or Redis kept failing. */
    static final String RETRIES_EXHAUSTED = "RETRIES_EXHAUSTED";

    /** The order cannot be written at all (a constraint or a bug): retrying would not help. */
    static final String WRITE_FAILED = "WRITE_FAILED";

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
    }

    List<Disposition> drain(List<Message> messages) {
        Batch batch = new Batch(messages.size());
        try {
            write(claim(decode(messages, batch), batch), batch);
        } catch (RuntimeException bug) {
            return afterUnexpected(messages, bug);
        }
        if (batch.requeues()) {
            backOff();
        }
        return batch.dispositions;
    }

    /**
     * Every failure of a store is handled per delivery, so this is a bug: each message gets one more
     * delivery, then goes to the dead-letter queue instead of looping (the quorum queue sets no limit).
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

    private List<Delivery> decode(List<Message> messages, Batch batch) {
        List<Delivery> decoded = new ArrayList<>(messages.size());
        for (Message message : messages) {
            MessageProperties properties = message.getMessageProperties();
            try {
                decoded.add(new Delivery(message, codec.decode(message.getBody()), DelayedRetry.attemptOf(message)));
            } catch (RuntimeException e) { // MalformedMessageException, or anything else the codec refuses
                log.warn(
                        "Dead-lettering undecodable message {} (delivery tag {}): {}",
                        properties.getMessageId(),
                        properties.getDeliveryTag(),
                        e.getMessage());
                metrics.deadLettered(DeadLetterReason.POISON);
                batch.dispositions.add(Disposition.deadLetter(properties.getDeliveryTag()));
            }
        }
        return decoded;
    }

    /** Takes each reservation over from the API; keeps the deliveries that still need writing. */
    private List<Delivery> claim(List<Delivery> deliveries, Batch batch) {
        List<Delivery> claimed = new ArrayList<>(deliveries.size());
        for (Delivery delivery : deliveries) {
            OrderRequested order = delivery.order();
            Transition claim = batch.attempt(
                    delivery,
                    () -> ledger.advance(order.saleId(), order.orderId(), CLAIMABLE, ReservationState.CLAIMED));
            if (claim == null) {
                continue;
            }
            switch (claim.state()) {
                // Claimed now, claimed before (a redelivery), or the record expired: Postgres decides.
                case null -> claimed.add(delivery);
                case RESERVED, PUBLISHED, CLAIMED -> claimed.add(delivery);
                // The API released it before telling anyone the order exists: there is no order.
                case RELEASED, REFUSED -> batch.ack(delivery, Outcome.DROPPED);
                // Already final: Postgres has it (a final state is only set after the commit).
                case CONFIRMED, REJECTED, FAILED -> batch.ack(delivery, Outcome.DUPLICATE);
            }
        }
        return claimed;
    }

    private void write(List<Delivery> claimed, Batch batch) {
        if (claimed.isEmpty()) {
            return;
        }
        List<Delivery> deliveries = claimed.stream().sorted(LOCK_ORDER).toList();
        List<Placement> placements;
        try {
            placements = metrics.timeBatchWrite(() -> transactions.execute(status -> deliveries.stream()
                    .map(delivery -> store.place(delivery.order(), PurchaseMode.ASYNC))
                    .toList()));
        } catch (RuntimeException batchFailure) {
            log.debug("Batch of {} orders failed, writing them one by one", deliveries.size(), batchFailure);
            if (FailureKind.of(batchFailure) == FailureKind.UNREACHABLE) {
                batch.unreachable = batchFailure;
            }
            // One order the database cannot take must not hold back the others.
            for (Delivery delivery : deliveries) {
                Placement placement = batch.attempt(
                        delivery,
                        () -> transactions.execute(status -> store.place(delivery.order(), PurchaseMode.ASYNC)));
                if (placement != null) {
                    settle(delivery, placement, batch);
                }
            }
            return;
        }
        for (int i = 0; i < deliveries.size(); i++) {
            settle(deliveries.get(i), placements.get(i), batch);
        }
    }

    /** After the commit: ends the hold of a confirmed order, gives a rejected order's units back. */
    private void settle(Delivery delivery, Placement placement, Batch batch) {
        OrderRequested order = delivery.order();
        Boolean settled = batch.attempt(
                delivery,
                () -> ledger.settle(order.saleId(), order.orderId(), placement.status(), placement.failureCode()));
        if (settled != null) {
            batch.ack(delivery, outcome(placement));
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

    /** Best effort: Postgres may well be the reason the order failed. */
    private Optional<StoredOrder> recordFailure(OrderRequested order, String code) {
        try {
            return transactions.execute(status -> {
                store.recordFailure(order, code);
                return store.find(order.orderId());
            });
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private boolean settleQuietly(OrderRequested order, OrderStatus status, String code) {
        try {
            ledger.settle(order.saleId(), order.orderId(), status, code);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void backOff() {
        try {
            Thread.sleep(properties.requeueBackoff());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The dispositions of one batch, and whether Postgres or Redis has already proven unreachable in it. */
    private final class Batch {

        private final List<Disposition> dispositions;
        private @Nullable RuntimeException unreachable;

        Batch(int size) {
            this.dispositions = new ArrayList<>(size);
        }

        /** Runs one step for a delivery; on failure, settles the delivery as a retry or a failure. */
        <T> @Nullable T attempt(Delivery delivery, Supplier<T> step) {
            RuntimeException known = unreachable;
            if (known != null) {
                dispositions.add(retryOrFail(delivery, known));
                return null;
            }
            try {
                return step.get();
            } catch (RuntimeException e) {
                dispositions.add(retryOrFail(delivery, e));
                if (FailureKind.of(e) == FailureKind.UNREACHABLE) {
                    unreachable = e;
                }
                return null;
            }
        }

        void ack(Delivery delivery, Outcome outcome) {
            metrics.order(outcome);
            dispositions.add(Disposition.ack(delivery.tag()));
        }

        boolean requeues() {
            return dispositions.stream().anyMatch(disposition -> disposition.kind() == Disposition.Kind.REQUEUE);
        }

        private Disposition retryOrFail(Delivery delivery, RuntimeException cause) {
            FailureKind kind = FailureKind.of(cause);
            if (!kind.isTransient()) {
                return fail(delivery, WRITE_FAILED, cause);
            }
            if (delivery.attempt() >= properties.maxAttempts()) {
                return fail(delivery, RETRIES_EXHAUSTED, cause);
            }
            try {
                retries.schedule(delivery);
            } catch (RuntimeException e) {
                log.warn(
                        "Requeueing order {} of sale {}: its retry could not be published ({}) after {}",
                        delivery.order().orderId(),
                        delivery.order().saleId(),
                        e.toString(),
                        cause.toString());
                return Disposition.requeue(delivery.tag());
            }
            metrics.retried();
            log.debug(
                    "Order {} goes to the retry queue after attempt {}",
                    delivery.order().orderId(),
                    delivery.attempt());
            return Disposition.ack(delivery.tag());
        }

        /**
         * FAILED: recorded in Postgres, units given back, message dead-lettered. The stores are only tried
         * while this batch has not found them unreachable: each try would wait out a connection timeout.
         */
        private Disposition fail(Delivery delivery, String code, RuntimeException cause) {
            OrderRequested order = delivery.order();
            boolean reachable = unreachable == null;
            Optional<StoredOrder> stored = reachable ? recordFailure(order, code) : Optional.empty();
            // Postgres is the truth: should the order have been written after all, Redis follows it.
            OrderStatus status = stored.map(StoredOrder::status).orElse(OrderStatus.FAILED);
            String storedCode = stored.map(StoredOrder::failureCode).orElse(code);
            boolean settled = reachable && settleQuietly(order, status, storedCode);
            metrics.order(Outcome.FAILED);
            metrics.deadLettered(DeadLetterReason.EXHAUSTED);
            log.warn(
                    "Dead-lettering order {} of sale {} as {} after {} attempt(s) ({}, {}): {}",
                    order.orderId(),
                    order.saleId(),
                    code,
                    delivery.attempt(),
                    stored.isPresent() ? "stored as " + status : "not stored",
                    settled ? "reservation settled" : "reservation still held",
                    cause.toString());
            return Disposition.deadLetter(delivery.tag());
        }
    }
}
