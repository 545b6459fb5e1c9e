package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.OrderStore.Placement;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.Transition;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Component;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The SYNC path, as a group commit: concurrent purchases are written to Postgres together, one short
 * transaction for many orders (one insert, one guarded stock update per sale), so the hot stock row is
 * locked once per batch instead of once per order. Each request answers 201 only after the commit that
 * holds its order. SYNC requests in flight are capped by a bulkhead that never waits, and admission
 * refuses new ones while the commit queue is late; a circuit breaker stops calling a failing database.
 * Each statement is cut off by the JDBC query timeout (spring.jdbc.template.query-timeout) and getting a
 * connection by the pool's connection timeout. The COMMIT, which no query timeout covers, and a connection
 * that stops answering are cut off by {@code app.purchase.commit-timeout} (the connection's network
 * timeout, for the batch's transaction only): the driver then drops the connection, the commit's outcome is
 * unknown and is looked up (one more query timeout). A request thus waits for its batch's write at most its
 * queueing, a query timeout per statement, the commit timeout and a query timeout.
 */
@Component
class SyncPurchase implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(SyncPurchase.class);
    static final String BULKHEAD = "sync-db";
    /** The name of the transaction that writes a batch of SYNC orders. */
    static final String WRITE_TRANSACTION = "flashsale.sync.write";

    static final String BREAKER = "postgres";

    /** What the database made of one order. */
    sealed interface Written {
        record Confirmed() implements Written {}

        record Refused(String code) implements Written {}

        /** Not written: the database failed or refused the call; nothing was taken. */
        record Failed() implements Written {}

        /**
         * Not known: the commit's outcome was lost and Postgres could not be asked. The reservation stays
         * WRITING until a replay or the reconciler finds the truth in Postgres.
         */
        record Unknown() implements Written {}
    }

    private final OrderStore orders;
    private final StockLedger ledger;
    private final DataSource dataSource;
    private final TransactionTemplate transactions;
    /** The batch writes, named: a group commit runs on a committer or on the purchase's own thread. */
    private final TransactionTemplate writes;

    private final Bulkhead bulkhead;
    private final CircuitBreaker breaker;
    private final AutoPilot autoPilot;
    private final GroupCommit<OrderRequested, Written> commits;
    private final Counter settleConflicts;
    private final int commitTimeoutMillis;

    SyncPurchase(
            OrderStore orders,
            StockLedger ledger,
            DataSource dataSource,
            TransactionTemplate transactions,
            BulkheadRegistry bulkheads,
            CircuitBreakerRegistry breakers,
            AutoPilot autoPilot,
            PurchaseProperties properties,
            MeterRegistry meters) {
        this.orders = orders;
        this.ledger = ledger;
        this.dataSource = dataSource;
        this.transactions = transactions;
        this.commitTimeoutMillis = Math.toIntExact(properties.commitTimeout().toMillis());
        this.writes =
                new TransactionTemplate(Objects.requireNonNull(transactions.getTransactionManager()), transactions);
        this.writes.setName(WRITE_TRANSACTION);
        this.bulkhead = bulkheads.bulkhead(BULKHEAD);
        this.breaker = breakers.circuitBreaker(BREAKER);
        this.autoPilot = autoPilot;
        this.commits = new GroupCommit<>("sync", properties.sync(), this::write, meters);
        this.settleConflicts = Counter.builder("flashsale.purchase.settle.conflicts")
                .description(
                        "SYNC orders confirmed in Postgres whose reservation Redis had already given back (their units are taken again)")
                .register(meters);
    }

    /** Whether the database breaker lets calls through. */
    boolean breakerClosed() {
        return breaker.getState() != CircuitBreaker.State.OPEN
                && breaker.getState() != CircuitBreaker.State.FORCED_OPEN;
    }

    /** Whether the sync path would take a purchase at once: breaker not open, a permit free, queue on time. */
    boolean hasCapacity() {
        return breakerClosed() && bulkhead.getMetrics().getAvailableConcurrentCalls() > 0 && commits.admits();
    }

    /**
     * Writes the reserved order with the others that arrive meanwhile. Without a bulkhead permit, or when
     * the database fails, the reservation is released and the request answered 503.
     */
    OrderStatus take(OrderRequested order, ApiProblem unavailable) {
        if (!bulkhead.tryAcquirePermission()) {
            throw release(order, unavailable);
        }
        long started = System.nanoTime();
        // The linger is left out of the path's measure: under traffic either path lingers alike, while an
        // idle probe or a rehearsal of the other path goes alone and does not (AUTO compares like for like).
        AtomicLong lingered = new AtomicLong();
        Written written;
        try {
            written = commits.submit(order, lingered::set);
        } catch (RuntimeException e) { // shutting down: its batch may or may not have begun writing it
            written = abandon(order);
        } finally {
            bulkhead.onComplete();
        }
        if (written instanceof Written.Confirmed || written instanceof Written.Refused) {
            // Only a write that ran is a measure of the path: a failure (an open breaker fails at once)
            // would read as a fast SYNC. Failures reach AUTO through the breaker's failure rate.
            autoPilot.syncTook(System.nanoTime() - started - lingered.get());
        }
        return switch (written) {
            case Written.Confirmed confirmed -> OrderStatus.CONFIRMED;
            case Written.Failed failed -> throw release(order, unavailable);
            case Written.Unknown unknown -> throw new OutcomeUnknown();
            case Written.Refused refused -> {
                settleRejected(order, refused.code());
                if (OrderStore.IDEMPOTENCY_KEY_REUSED.equals(refused.code())) {
                    // The key's Redis binding expired, but Postgres still holds an older order under it.
                    throw IdempotencyKeys.reused();
                }
                throw Purchases.refusal(OrderStore.LIMIT_REACHED.equals(refused.code()) ? refused.code() : "SOLD_OUT");
            }
        };
    }

    /**
     * An order whose request stopped waiting for its batch: released while still RESERVED (nothing began
     * writing it); once WRITING, its commit may still land, so the reconciler decides from Postgres.
     */
    private Written abandon(OrderRequested order) {
        try {
            Transition released = ledger.release(
                    order.saleId(),
                    order.orderId(),
                    EnumSet.of(ReservationState.RESERVED),
                    ReservationState.RELEASED,
                    "UNAVAILABLE");
            return released.state() == ReservationState.WRITING ? new Written.Unknown() : new Written.Failed();
        } catch (RuntimeException e) {
            return new Written.Unknown();
        }
    }

    /** The commit of the order's write has an outcome nobody knows yet; its Idempotency-Key must stay bound. */
    static final class OutcomeUnknown extends RuntimeException {
        OutcomeUnknown() {
            super("commit outcome unknown", null, false, false);
        }
    }

    /**
     * One batch in one transaction. Each reservation first leaves RESERVED for WRITING, so that nothing
     * releases it while it is being written; one the reconciler already released is not written.
     */
    private List<Written> write(List<OrderRequested> batch) {
        if (!breaker.tryAcquirePermission()) {
            return Collections.nCopies(batch.size(), new Written.Failed());
        }
        List<OrderRequested> writing;
        try {
            writing = startWriting(batch);
        } catch (RuntimeException e) { // Redis unreachable: nothing written, the reservations stay RESERVED
            breaker.releasePermission();
            return Collections.nCopies(batch.size(), new Written.Failed());
        }
        Map<UUID, Written> written = new HashMap<>();
        if (writing.isEmpty()) {
            breaker.releasePermission();
        } else {
            List<Written> results = commit(writing);
            for (int i = 0; i < writing.size(); i++) {
                written.put(writing.get(i).orderId(), results.get(i));
            }
        }
        return batch.stream()
                .map(order -> written.getOrDefault(order.orderId(), new Written.Failed()))
                .toList();
    }

    /** Moves the reservations RESERVED → WRITING, one call per sale; the orders it moved, to be written. */
    private List<OrderRequested> startWriting(List<OrderRequested> batch) {
        Map<UUID, Boolean> started = new HashMap<>();
        OrderRequested.bySale(batch, order -> order).forEach((saleId, ofSale) -> {
            List<UUID> ids = OrderRequested.ids(ofSale);
            List<Transition> moved =
                    ledger.advanceAll(saleId, ids, EnumSet.of(ReservationState.RESERVED), ReservationState.WRITING);
            for (int i = 0; i < ids.size(); i++) {
                started.put(ids.get(i), moved.get(i).changed());
            }
        });
        return batch.stream()
                .filter(order -> started.getOrDefault(order.orderId(), false))
                .toList();
    }

    /**
     * Writes orders already WRITING in one transaction; one order the database cannot take does not fail
     * the others. When the commit itself fails, its outcome is unknown: Postgres is asked before anything
     * is released.
     */
    private List<Written> commit(List<OrderRequested> batch) {
        long started = System.nanoTime();
        AtomicBoolean committing = new AtomicBoolean();
        List<Placement> placements;
        try {
            placements = writes.execute(status -> {
                boundWaits();
                List<Placement> placed = orders.placeAll(batch, PurchaseMode.SYNC);
                committing.set(true);
                return placed;
            });
            breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        } catch (DataAccessException | TransactionException e) {
            breaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, e);
            if (committing.get()) {
                log.warn(
                        "commit of {} sync orders has an unknown outcome, asking Postgres: {}",
                        batch.size(),
                        e.toString());
                return lookUp(batch);
            }
            log.debug("sync write of {} orders failed: {}", batch.size(), e.toString());
            if (batch.size() > 1 && e instanceof DataIntegrityViolationException) {
                return batch.stream().map(order -> commitAlone(order)).toList();
            }
            return Collections.nCopies(batch.size(), new Written.Failed());
        }
        return settle(batch, placements);
    }

    /**
     * Bounds every wait on this transaction's connection, the COMMIT's included: past the commit timeout the
     * driver drops the connection. The pool restores the connection's own network timeout when it is returned.
     */
    private void boundWaits() {
        try {
            DataSourceUtils.getConnection(dataSource).setNetworkTimeout(Runnable::run, commitTimeoutMillis);
        } catch (SQLException e) {
            throw new DataAccessResourceFailureException("the commit timeout could not be set", e);
        }
    }

    private Written commitAlone(OrderRequested order) {
        if (!breaker.tryAcquirePermission()) {
            return new Written.Failed();
        }
        return commit(List.of(order)).getFirst();
    }

    /**
     * After a commit with an unknown outcome: which orders Postgres holds, once any transaction still
     * writing them ended. Those it holds are answered as written; the others were not written and are
     * released; if Postgres cannot be asked either, the outcome stays unknown.
     */
    private List<Written> lookUp(List<OrderRequested> batch) {
        Map<UUID, StoredOrder> stored;
        try {
            stored = transactions.execute(status -> {
                status.setRollbackOnly();
                return orders.findSettled(batch);
            });
        } catch (RuntimeException e) {
            log.warn(
                    "{} sync orders stay WRITING for the reconciler: Postgres cannot tell ({})",
                    batch.size(),
                    e.toString());
            return Collections.nCopies(batch.size(), new Written.Unknown());
        }
        List<Placement> placements = batch.stream()
                .map(order -> {
                    StoredOrder found = stored.get(order.orderId());
                    return found == null ? null : new Placement(found.status(), false, found.failureCode());
                })
                .toList();
        List<OrderRequested> found = new ArrayList<>();
        List<Placement> foundPlacements = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            if (placements.get(i) != null) {
                found.add(batch.get(i));
                foundPlacements.add(placements.get(i));
            }
        }
        List<Written> settled = settle(found, foundPlacements);
        Map<UUID, Written> byId = new HashMap<>();
        for (int i = 0; i < found.size(); i++) {
            byId.put(found.get(i).orderId(), settled.get(i));
        }
        return batch.stream()
                .map(order -> byId.getOrDefault(order.orderId(), new Written.Failed()))
                .toList();
    }

    private List<Written> settle(List<OrderRequested> batch, List<Placement> placements) {
        settleConfirmed(batch, placements);
        List<Written> written = new ArrayList<>(batch.size());
        for (Placement placement : placements) {
            written.add(
                    switch (placement.status()) {
                        case CONFIRMED -> new Written.Confirmed();
                        case REJECTED -> new Written.Refused(placement.failureCode());
                        // Only the reconciler records FAILED, and only for ASYNC orders: not this one.
                        case QUEUED, FAILED -> new Written.Failed();
                    });
        }
        return written;
    }

    /**
     * Ends the holds in Redis, one call per sale. A record that did not move from WRITING (or was final
     * already as CONFIRMED) means its units were given back while Postgres sold them: counted and logged,
     * never ignored. If Redis is unreachable now, the records stay WRITING and the reconciler settles
     * them from Postgres after its grace.
     */
    private void settleConfirmed(List<OrderRequested> batch, List<Placement> placements) {
        List<OrderRequested> confirmed = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            if (placements.get(i).status() == OrderStatus.CONFIRMED) {
                confirmed.add(batch.get(i));
            }
        }
        OrderRequested.bySale(confirmed, order -> order).forEach((saleId, ofSale) -> {
            List<UUID> ids = OrderRequested.ids(ofSale);
            List<Transition> settled;
            try {
                settled = ledger.advanceAll(saleId, ids, ReservationState.HOLDING, ReservationState.CONFIRMED);
            } catch (RuntimeException e) {
                log.warn(
                        "{} orders of sale {} confirmed but their reservations not settled (the reconciler will): {}",
                        ids.size(),
                        saleId,
                        e.toString());
                return;
            }
            for (int i = 0; i < ids.size(); i++) {
                Transition transition = settled.get(i);
                if (!transition.changed() && transition.state() != ReservationState.CONFIRMED) {
                    settleConflicts.increment();
                    takeBack(saleId, ids.get(i), transition.state());
                }
            }
        });
    }

    /**
     * An order Postgres confirmed whose units Redis had given back: its write outlasted the reconciler's
     * grace, whose probe found nothing yet, so the reservation was released as abandoned. Redis follows
     * Postgres: the units are taken again and the record marked CONFIRMED, or Redis would sell them twice.
     */
    private void takeBack(long saleId, UUID orderId, ReservationState found) {
        Transition taken;
        try {
            taken = ledger.confirmReleased(saleId, orderId);
        } catch (RuntimeException e) {
            taken = new Transition(false, found);
        }
        if (taken.changed()) {
            log.warn(
                    "order {} of sale {} committed after its reservation was released: units taken again",
                    orderId,
                    saleId);
        } else {
            log.error(
                    "order {} of sale {} is CONFIRMED in Postgres but its reservation is {}: Redis gave its units back",
                    orderId,
                    saleId,
                    taken.state());
        }
    }

    /** Gives a rejected order's units back; if Redis is unreachable, the reconciler does it from Postgres. */
    private void settleRejected(OrderRequested order, String code) {
        try {
            ledger.settle(order.saleId(), order.orderId(), OrderStatus.REJECTED, code);
        } catch (RuntimeException e) {
            log.warn(
                    "order {} of sale {} rejected but its reservation not settled (the reconciler will): {}",
                    order.orderId(),
                    order.saleId(),
                    e.toString());
        }
    }

    private ApiProblem release(OrderRequested order, ApiProblem unavailable) {
        ledger.release(
                order.saleId(),
                order.orderId(),
                EnumSet.of(ReservationState.RESERVED, ReservationState.WRITING),
                ReservationState.RELEASED,
                "UNAVAILABLE");
        return unavailable;
    }

    @Override
    public void destroy() {
        commits.close();
    }
}
