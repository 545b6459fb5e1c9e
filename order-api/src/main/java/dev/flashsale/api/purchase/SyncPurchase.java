package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.OrderStore.Placement;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.stereotype.Component;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The SYNC path, as a group commit: concurrent purchases are written to Postgres together, one short
 * transaction for many orders (one insert, one guarded stock update per sale), so the hot stock row is
 * locked once per batch instead of once per order. Each request answers 201 only after the commit that
 * holds its order. SYNC requests in flight are capped by a bulkhead that never waits, and admission
 * refuses new ones while the commit queue is late; a circuit breaker stops calling a failing database.
 * The time limit is the JDBC query timeout and the pool's connection timeout: they cancel the work itself.
 */
@Component
class SyncPurchase implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(SyncPurchase.class);
    static final String BULKHEAD = "sync-db";
    static final String BREAKER = "postgres";

    /** What the database made of one order. */
    sealed interface Written {
        record Confirmed() implements Written {}

        record Refused(String code) implements Written {}

        /** Not written: the database failed or refused the call; nothing was taken. */
        record Failed() implements Written {}
    }

    private final OrderStore orders;
    private final StockLedger ledger;
    private final TransactionTemplate transactions;
    private final Bulkhead bulkhead;
    private final CircuitBreaker breaker;
    private final AutoPilot autoPilot;
    private final GroupCommit<OrderRequested, Written> commits;

    SyncPurchase(
            OrderStore orders,
            StockLedger ledger,
            TransactionTemplate transactions,
            BulkheadRegistry bulkheads,
            CircuitBreakerRegistry breakers,
            AutoPilot autoPilot,
            PurchaseProperties properties,
            MeterRegistry meters) {
        this.orders = orders;
        this.ledger = ledger;
        this.transactions = transactions;
        this.bulkhead = bulkheads.bulkhead(BULKHEAD);
        this.breaker = breakers.circuitBreaker(BREAKER);
        this.autoPilot = autoPilot;
        this.commits = new GroupCommit<>("sync", properties.sync(), this::write, meters);
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
        Written written;
        try {
            written = commits.submit(order);
        } catch (RuntimeException e) { // shutting down: nothing was written for it
            written = new Written.Failed();
        } finally {
            bulkhead.onComplete();
            autoPilot.syncTook(System.nanoTime() - started);
        }
        return switch (written) {
            case Written.Confirmed confirmed -> OrderStatus.CONFIRMED;
            case Written.Failed failed -> throw release(order, unavailable);
            case Written.Refused refused -> {
                ledger.settle(order.saleId(), order.orderId(), OrderStatus.REJECTED, refused.code());
                if (OrderStore.IDEMPOTENCY_KEY_REUSED.equals(refused.code())) {
                    // The key's Redis binding expired, but Postgres still holds an older order under it.
                    throw IdempotencyKeys.reused();
                }
                throw Purchases.refusal(OrderStore.LIMIT_REACHED.equals(refused.code()) ? refused.code() : "SOLD_OUT");
            }
        };
    }

    /** One batch in one transaction; one order the database cannot take does not fail the others. */
    private List<Written> write(List<OrderRequested> batch) {
        if (!breaker.tryAcquirePermission()) {
            return Collections.nCopies(batch.size(), new Written.Failed());
        }
        long started = System.nanoTime();
        List<Placement> placements;
        try {
            placements = transactions.execute(status -> orders.placeAll(batch, PurchaseMode.SYNC));
            breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        } catch (DataAccessException | TransactionException e) {
            breaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, e);
            log.debug("sync write of {} orders failed: {}", batch.size(), e.toString());
            if (batch.size() > 1 && e instanceof DataIntegrityViolationException) {
                return batch.stream()
                        .map(order -> write(List.of(order)).getFirst())
                        .toList();
            }
            return Collections.nCopies(batch.size(), new Written.Failed());
        }
        settleConfirmed(batch, placements);
        List<Written> written = new ArrayList<>(batch.size());
        for (Placement placement : placements) {
            written.add(
                    placement.status() == OrderStatus.CONFIRMED
                            ? new Written.Confirmed()
                            : new Written.Refused(placement.failureCode()));
        }
        return written;
    }

    /**
     * Ends the holds in Redis, one call per sale; if Redis is unreachable now, the sweeper settles them
     * from Postgres later.
     */
    private void settleConfirmed(List<OrderRequested> batch, List<Placement> placements) {
        List<OrderRequested> confirmed = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            if (placements.get(i).status() == OrderStatus.CONFIRMED) {
                confirmed.add(batch.get(i));
            }
        }
        OrderRequested.bySale(confirmed).forEach((saleId, ids) -> {
            try {
                ledger.settleConfirmed(saleId, ids);
            } catch (RuntimeException e) {
                log.warn(
                        "{} orders of sale {} confirmed but their reservations not settled (the sweeper will): {}",
                        ids.size(),
                        saleId,
                        e.toString());
            }
        });
    }

    private ApiProblem release(OrderRequested order, ApiProblem unavailable) {
        ledger.release(
                order.saleId(),
                order.orderId(),
                EnumSet.of(ReservationState.RESERVED),
                ReservationState.RELEASED,
                "UNAVAILABLE");
        return unavailable;
    }

    @Override
    public void destroy() {
        commits.close();
    }
}
