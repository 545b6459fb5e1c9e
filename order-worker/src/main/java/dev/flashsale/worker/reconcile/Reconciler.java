package dev.flashsale.worker.reconcile;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.StockLedger.Holding;
import dev.flashsale.worker.PostgresTimeouts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The one reconciler: every reservation still holding stock (RESERVED, PUBLISHED, CLAIMED, WRITING) past its
 * bound is settled from Postgres's truth. An order Postgres has (CONFIRMED, REJECTED, FAILED) is followed by
 * Redis; an order it does not have is closed as {@link Settlement} says, so that nothing can write it later.
 * Ages are Redis's own clock. Every step is a compare-and-set script or an idempotent insert, so several
 * workers may reconcile at once. The age of the oldest holding reservation is a gauge: the reconciler's lag.
 */
@Component
class Reconciler {

    /** The code on a SYNC reservation given back because its request never finished. */
    static final String ABANDONED = "ABANDONED";

    /** The code on an ASYNC order no worker wrote within the hand-off bound. */
    static final String HANDOFF_EXPIRED = "HANDOFF_EXPIRED";

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

    private final JdbcClient jdbc;
    private final StockLedger ledger;
    private final OrderStore store;
    private final TransactionTemplate transactions;
    private final ReconcilerProperties properties;
    private final Consuming consuming;
    private final Counter settledCount;
    private final Counter releasedCount;
    private final Counter failedCount;
    private final Counter timeouts;
    private final AtomicLong oldestMillis = new AtomicLong();
    private volatile List<Long> lastSales = List.of();

    Reconciler(
            JdbcClient jdbc,
            StockLedger ledger,
            OrderStore store,
            TransactionTemplate transactions,
            ReconcilerProperties properties,
            Consuming consuming,
            MeterRegistry registry) {
        this.jdbc = jdbc;
        this.ledger = ledger;
        this.store = store;
        this.transactions = transactions;
        this.properties = properties;
        this.consuming = consuming;
        this.settledCount = counter(registry, "settled");
        this.releasedCount = counter(registry, "released");
        this.failedCount = counter(registry, "failed");
        this.timeouts = Counter.builder(PostgresTimeouts.METER)
                .description("Postgres waits cut short by the lock or statement timeout (a row lock held open)")
                .tag("in", "reconciler")
                .register(registry);
        Gauge.builder("flashsale.worker.holding.oldest.age", oldestMillis, millis -> millis.get() / 1000.0)
                .description(
                        "Age of the oldest reservation still holding stock (a claimed one: since its latest claim), by Redis's clock")
                .baseUnit("seconds")
                .register(registry);
    }

    private static Counter counter(MeterRegistry registry, String outcome) {
        return Counter.builder("flashsale.worker.reconciled")
                .description("Reservations the reconciler settled, by outcome")
                .tag("outcome", outcome)
                .register(registry);
    }

    /** What one pass changed: Redis followed Postgres, units went back unwritten, orders were closed FAILED. */
    record Pass(int settled, int released, int failed) {

        static final Pass NOTHING = new Pass(0, 0, 0);

        Pass plus(Pass other) {
            return new Pass(settled + other.settled, released + other.released, failed + other.failed);
        }
    }

    @Scheduled(fixedDelayString = "${app.reconciler.interval}", initialDelayString = "${app.reconciler.interval}")
    void reconcile() {
        Pass total = Pass.NOTHING;
        List<Long> sales = lastSales;
        try {
            // Recent sales are many (every sale of the last day); the few holding anything are found in one
            // round trip, so an idle pass costs one pipeline instead of two script calls per sale.
            sales = ledger.salesHolding(salesToReconcile());
            lastSales = sales;
        } catch (RuntimeException e) { // Postgres or Redis unreachable: the next pass carries on
            log.warn("Reconciliation stopped early: {}", e.toString());
            measureOldest(sales);
            return;
        }
        for (long saleId : sales) {
            try {
                total = total.plus(reconcile(saleId));
            } catch (RuntimeException e) { // one sale's stall (a row lock held open) holds back no other
                if (PostgresTimeouts.isTimeout(e)) {
                    timeouts.increment();
                }
                log.warn("Reconciliation of sale {} stopped early: {}", saleId, e.toString());
            }
        }
        measureOldest(sales);
        if (!total.equals(Pass.NOTHING)) {
            log.info(
                    "Reconciled held reservations: {} settled from Postgres, {} released as {}, {} closed as {} {}",
                    total.settled(),
                    total.released(),
                    ABANDONED,
                    total.failed(),
                    "FAILED",
                    HANDOFF_EXPIRED);
        }
    }

    /**
     * Settles the sale's reservations that are past their bound. Reads every reservation older than the
     * shortest bound, page by page: any number of ASYNC ones still waiting (a backlog) may sit ahead of a
     * due SYNC one, and a cap on the pages would hide it from every pass.
     */
    Pass reconcile(long saleId) {
        Pass pass = Pass.NOTHING;
        int offset = 0;
        List<Holding> due;
        do {
            due = ledger.holding(saleId, properties.earliest(), offset, properties.batchSize());
            int before = pass.settled() + pass.released() + pass.failed();
            for (Holding holding : due) {
                pass = pass.plus(settle(saleId, holding));
            }
            int changed = pass.settled() + pass.released() + pass.failed() - before;
            // Settled ones left the set; the ones still waiting are skipped on the next page.
            offset += due.size() - changed;
        } while (due.size() == properties.batchSize());
        settledCount.increment(pass.settled());
        releasedCount.increment(pass.released());
        failedCount.increment(pass.failed());
        return pass;
    }

    private Pass settle(long saleId, Holding holding) {
        Optional<Reservation> found = ledger.find(saleId, holding.orderId());
        if (found.isEmpty()) {
            // Expired: the release script finds nothing to give back and drops it from the holding set.
            ledger.release(saleId, holding.orderId(), ReservationState.HOLDING, ReservationState.RELEASED, ABANDONED);
            return Pass.NOTHING;
        }
        Reservation reservation = found.get();
        Settlement settlement =
                Settlement.of(reservation.state(), reservation.mode(), holding.age(), consuming.duration(), properties);
        if (settlement == Settlement.WAIT) {
            return Pass.NOTHING;
        }
        Optional<StoredOrder> stored = store.find(reservation.orderId());
        if (stored.isPresent()) {
            return followPostgres(stored.get());
        }
        return switch (settlement) {
            case RELEASE -> release(reservation, ReservationState.RESERVED);
            case PROBE_THEN_RELEASE -> {
                OrderRequested order = orderOf(reservation);
                Optional<StoredOrder> written = Optional.ofNullable(transactions.execute(status -> {
                    status.setRollbackOnly();
                    return store.findSettled(List.of(order)).get(order.orderId());
                }));
                yield written.isPresent()
                        ? followPostgres(written.get())
                        : release(reservation, ReservationState.WRITING);
            }
            case FAIL -> {
                StoredOrder closed = transactions.execute(status -> {
                    store.recordFailure(orderOf(reservation), HANDOFF_EXPIRED);
                    return store.find(reservation.orderId()).orElseThrow();
                });
                yield followPostgres(closed);
            }
            case WAIT -> Pass.NOTHING;
        };
    }

    private Pass followPostgres(StoredOrder order) {
        if (!ledger.settle(order.saleId(), order.orderId(), order.status(), order.failureCode())) {
            return Pass.NOTHING; // someone else settled it meanwhile
        }
        return switch (order.status()) {
            case FAILED -> HANDOFF_EXPIRED.equals(order.failureCode()) ? new Pass(0, 0, 1) : new Pass(1, 0, 0);
            case QUEUED, CONFIRMED, REJECTED -> new Pass(1, 0, 0);
        };
    }

    private Pass release(Reservation reservation, ReservationState from) {
        return ledger.release(
                                reservation.saleId(),
                                reservation.orderId(),
                                EnumSet.of(from),
                                ReservationState.RELEASED,
                                ABANDONED)
                        .changed()
                ? new Pass(0, 1, 0)
                : Pass.NOTHING;
    }

    /** The order as its reservation knows it; the Idempotency-Key stays with the API, Postgres needs the id. */
    private static OrderRequested orderOf(Reservation reservation) {
        return new OrderRequested(
                reservation.orderId(),
                reservation.saleId(),
                reservation.userId(),
                reservation.quantity(),
                reservation.createdAt(),
                null,
                null);
    }

    private void measureOldest(List<Long> sales) {
        long oldest = 0;
        try {
            for (long saleId : sales) {
                List<Holding> first = ledger.holding(saleId, Duration.ZERO, 0, 1);
                if (!first.isEmpty()) {
                    oldest = Math.max(oldest, first.getFirst().age().toMillis());
                }
            }
            oldestMillis.set(oldest);
        } catch (RuntimeException e) {
            log.debug("oldest holding reservation not measured: {}", e.toString());
        }
    }

    private List<Long> salesToReconcile() throws DataAccessException {
        return jdbc.sql("select id from sale where ends_at > :since order by id")
                .param("since", Timestamp.from(Instant.now().minus(properties.saleLookback())))
                .query(Long.class)
                .list();
    }
}
