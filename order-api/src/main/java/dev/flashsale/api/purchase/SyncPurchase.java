package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The SYNC path: the order is written to Postgres inside the request. Concurrent database work is bounded
 * by a bulkhead sized to the connection pool and fails fast instead of queueing inside the pool; a circuit
 * breaker stops calling a failing database. The time limit is the JDBC query timeout and the pool's
 * connection timeout: they cancel the work itself, where a thread-based time limiter would abandon a
 * thread still holding a connection.
 */
@Component
class SyncPurchase {

    private static final Logger log = LoggerFactory.getLogger(SyncPurchase.class);
    static final String BULKHEAD = "sync-db";
    static final String BREAKER = "postgres";

    private final OrderStore orders;
    private final StockLedger ledger;
    private final TransactionTemplate transactions;
    private final Bulkhead bulkhead;
    private final CircuitBreaker breaker;
    private final AutoPilot autoPilot;

    SyncPurchase(
            OrderStore orders,
            StockLedger ledger,
            TransactionTemplate transactions,
            BulkheadRegistry bulkheads,
            CircuitBreakerRegistry breakers,
            AutoPilot autoPilot) {
        this.orders = orders;
        this.ledger = ledger;
        this.transactions = transactions;
        this.bulkhead = bulkheads.bulkhead(BULKHEAD);
        this.breaker = breakers.circuitBreaker(BREAKER);
        this.autoPilot = autoPilot;
    }

    /** Whether the database breaker lets calls through. */
    boolean breakerClosed() {
        return breaker.getState() != CircuitBreaker.State.OPEN
                && breaker.getState() != CircuitBreaker.State.FORCED_OPEN;
    }

    /** Whether the sync path would take a purchase at once: breaker not open and a bulkhead permit free. */
    boolean hasCapacity() {
        return breakerClosed() && bulkhead.getMetrics().getAvailableConcurrentCalls() > 0;
    }

    /**
     * Writes the reserved order. It first takes a bulkhead permit (waiting at most the bulkhead's short
     * max-wait, outside the connection pool) and the breaker's permission; without them, or when the
     * database fails, the reservation is released and the request answered 503.
     */
    OrderStatus take(OrderRequested order, ApiProblem unavailable) {
        if (!bulkhead.tryAcquirePermission()) {
            throw release(order, unavailable);
        }
        if (!breaker.tryAcquirePermission()) {
            bulkhead.onComplete();
            throw release(order, unavailable);
        }
        long started = System.nanoTime();
        OrderStore.Placement placement;
        try {
            placement = transactions.execute(status -> orders.place(order, PurchaseMode.SYNC));
            breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        } catch (DataAccessException | TransactionException e) {
            breaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, e);
            log.debug("sync write of order {} failed: {}", order.orderId(), e.toString());
            throw release(order, unavailable);
        } finally {
            bulkhead.onComplete();
            autoPilot.syncTook(System.nanoTime() - started);
        }
        if (placement.status() == OrderStatus.CONFIRMED) {
            settle(order);
            return OrderStatus.CONFIRMED;
        }
        ledger.settle(order.saleId(), order.orderId(), OrderStatus.REJECTED, placement.failureCode());
        if (OrderStore.IDEMPOTENCY_KEY_REUSED.equals(placement.failureCode())) {
            // The key's Redis binding expired, but Postgres still holds an older order under it.
            throw IdempotencyKeys.reused();
        }
        throw new ApiProblem(HttpStatus.CONFLICT, "SOLD_OUT", "The sale is sold out.");
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

    /** Ends the hold in Redis; if Redis is unreachable now, the sweeper settles it from Postgres later. */
    private void settle(OrderRequested order) {
        try {
            ledger.settle(order.saleId(), order.orderId(), OrderStatus.CONFIRMED, "");
        } catch (RuntimeException e) {
            log.warn(
                    "order {} confirmed but its reservation not settled (the sweeper will): {}",
                    order.orderId(),
                    e.toString());
        }
    }
}
