package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.Breakers;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.OrderStore.Placement;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveResult;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Component;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The SYNC path's group commit: one batch of concurrent purchases written to Postgres in one short
 * transaction (one insert, one guarded stock update per sale), so the hot stock row is locked once per
 * batch instead of once per order; their reservations are settled after the commit
 * ({@link SyncSettlement}). A circuit breaker stops calling a failing database. Each statement is cut off
 * by the JDBC query timeout (spring.jdbc.template.query-timeout) and getting a connection by the pool's
 * connection timeout. The COMMIT, which no query timeout covers, and a connection that stops answering are
 * cut off by {@code app.purchase.commit-timeout} (the connection's network timeout, for the batch's
 * transaction only): the driver then drops the connection, the commit's outcome is unknown and is looked up
 * (one more query timeout). A batch's write thus takes at most a query timeout per statement, the commit
 * timeout and a query timeout.
 */
@Component
class SyncCommits {

    private static final Logger log = LoggerFactory.getLogger(SyncCommits.class);

    /** The name of the transaction that writes a batch of SYNC orders. */
    static final String WRITE_TRANSACTION = "flashsale.sync.write";

    static final String BREAKER = "postgres";

    private final OrderStore orders;
    private final BatchReserves reserves;
    private final DataSource dataSource;
    private final TransactionTemplate transactions;
    /** The batch writes, named: a group commit runs on a committer or on the purchase's own thread. */
    private final TransactionTemplate writes;

    private final CircuitBreaker breaker;
    private final SyncSettlement settlement;
    private final int commitTimeoutMillis;

    SyncCommits(
            OrderStore orders,
            BatchReserves reserves,
            DataSource dataSource,
            TransactionTemplate transactions,
            CircuitBreakerRegistry breakers,
            SyncSettlement settlement,
            PurchaseProperties properties) {
        this.orders = orders;
        this.reserves = reserves;
        this.dataSource = dataSource;
        this.transactions = transactions;
        this.commitTimeoutMillis = Math.toIntExact(properties.commitTimeout().toMillis());
        this.writes =
                new TransactionTemplate(Objects.requireNonNull(transactions.getTransactionManager()), transactions);
        this.writes.setName(WRITE_TRANSACTION);
        this.breaker = breakers.circuitBreaker(BREAKER);
        this.settlement = settlement;
    }

    /** Whether the database breaker is open: then no batch is written, every order in it fails. */
    boolean breakerOpen() {
        return Breakers.open(breaker);
    }

    /**
     * One batch in one transaction. Its orders are reserved first, straight into WRITING, one reserve call per
     * sale ({@link BatchReserves}); those Redis reserved are written, the others answered with what Redis
     * decided. With the breaker open nothing is reserved.
     */
    List<Written> write(List<BatchReserves.Order> asks) {
        if (!breaker.tryAcquirePermission()) {
            return Collections.nCopies(asks.size(), new Written.Failed());
        }
        List<@Nullable ReserveResult> reserved = reserves.reserve(asks, PurchasePath.SYNC, ReservationState.WRITING)
                .results();
        List<OrderRequested> batch =
                asks.stream().map(BatchReserves.Order::requested).toList();
        List<OrderRequested> writing = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            if (reserved.get(i) instanceof ReserveResult.Reserved) {
                writing.add(batch.get(i));
            }
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
        List<Written> answers = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            ReserveResult result = reserved.get(i);
            answers.add(
                    switch (result) {
                        case null -> new NotTaken.ReserveFailed();
                        case ReserveResult.Reserved r ->
                            written.getOrDefault(batch.get(i).orderId(), new Written.Failed());
                        default -> new NotTaken.NotReserved(result);
                    });
        }
        return answers;
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
                List<Placement> placed = orders.placeAll(batch, PurchasePath.SYNC);
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
        return settlement.settle(batch, placements);
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
        List<Written> settled = settlement.settle(found, foundPlacements);
        Map<UUID, Written> byId = new HashMap<>();
        for (int i = 0; i < found.size(); i++) {
            byId.put(found.get(i).orderId(), settled.get(i));
        }
        return batch.stream()
                .map(order -> byId.getOrDefault(order.orderId(), new Written.Failed()))
                .toList();
    }
}
