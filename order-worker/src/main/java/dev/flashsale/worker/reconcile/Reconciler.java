package dev.flashsale.worker.reconcile;

import dev.flashsale.common.stock.InstanceLeases;
import dev.flashsale.common.stock.PendingReservations;
import dev.flashsale.common.stock.PendingReservations.Pending;
import dev.flashsale.worker.PostgresTimeouts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The one reconciler: every reservation still holding stock (RESERVED, PUBLISHED, CLAIMED, WRITING) past its
 * bound is settled from Postgres's truth, one by one ({@link Settler}). Ages are Redis's own clock. Several
 * workers may reconcile at once. The age of the oldest pending reservation is a gauge: the reconciler's lag. The
 * reservations an API instance held when it lapsed ({@link InstanceLeases}) are settled as soon as it has, whatever
 * their age.
 */
@Component
class Reconciler {

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

    private final JdbcClient jdbc;
    private final PendingReservations pending;
    private final Settler settler;
    private final ReconcilerProperties properties;
    private final InstanceLeases leases;
    private final Counter settledCount;
    private final Counter releasedCount;
    private final Counter failedCount;
    private final Counter publishedCount;
    private final Counter timeouts;
    private final AtomicLong oldestMillis = new AtomicLong();
    private volatile List<Long> lastSales = List.of();

    Reconciler(
            JdbcClient jdbc,
            PendingReservations pending,
            Settler settler,
            ReconcilerProperties properties,
            InstanceLeases leases,
            MeterRegistry registry) {
        this.jdbc = jdbc;
        this.pending = pending;
        this.settler = settler;
        this.properties = properties;
        this.leases = leases;
        this.settledCount = counter(registry, "settled");
        this.releasedCount = counter(registry, "released");
        this.failedCount = counter(registry, "failed");
        this.publishedCount = counter(registry, "published");
        this.timeouts = Counter.builder(PostgresTimeouts.METER)
                .description("Postgres waits cut short by the lock or statement timeout (a row lock held open)")
                .tag("in", "reconciler")
                .register(registry);
        Gauge.builder("flashsale.worker.pending.oldest.age", oldestMillis, millis -> millis.get() / 1000.0)
                .description(
                        "Age of the oldest reservation still holding stock (a claimed one: since its latest claim), by Redis's clock")
                .baseUnit("seconds")
                .register(registry);
    }

    private static Counter counter(MeterRegistry registry, String outcome) {
        return Counter.builder("flashsale.worker.reconciled")
                .description("Reservations the reconciler settled, or published for a worker, by outcome")
                .tag("outcome", outcome)
                .register(registry);
    }

    @Scheduled(fixedDelayString = "${app.reconciler.interval}", initialDelayString = "${app.reconciler.interval}")
    void reconcile() {
        List<Long> sales = lastSales;
        settler.passBegins();
        try {
            // Recent sales are many (every sale of the last day); the few holding anything are found in one
            // round trip, so an idle pass costs one pipeline instead of two script calls per sale.
            sales = pending.salesWithAny(salesToReconcile());
            lastSales = sales;
        } catch (RuntimeException e) { // Postgres or Redis unreachable: the next pass carries on
            log.warn("Reconciliation stopped early: {}", e.toString());
            measureOldest(sales);
            return;
        }
        Pass total = reconcileEach(sales, properties.earliest(), Set.of());
        measureOldest(sales);
        if (!total.equals(Pass.NOTHING)) {
            log.info(
                    "Reconciled held reservations: {} settled from Postgres, {} released as {}, {} closed as {} {},"
                            + " {} published for a worker",
                    total.settled(),
                    total.released(),
                    Settler.ABANDONED,
                    total.failed(),
                    "FAILED",
                    Settler.HANDOFF_EXPIRED,
                    total.published());
        }
    }

    /**
     * Settles, in every sale, the reservations held by API instances that lapsed (their heartbeat stopped while
     * another's went on), then forgets those instances, once: a sale that cannot be settled now (a stall, an
     * unreadable record) holds back no other, and its records wait out the grace, as every record did before
     * instances had leases.
     */
    @Scheduled(fixedDelayString = "${app.reconciler.lease-check}", initialDelayString = "${app.reconciler.lease-check}")
    void settleLapsed() {
        List<String> lapsed;
        List<Long> sales;
        try {
            lapsed = leases.lapsed(properties.instanceLease());
            if (lapsed.isEmpty()) {
                return;
            }
            sales = pending.salesWithAny(salesToReconcile());
        } catch (RuntimeException e) { // Postgres or Redis unreachable: the next check carries on
            log.debug("Lapsed instances not checked: {}", e.toString());
            return;
        }
        settler.passBegins();
        // A sale that cannot be settled now holds back no other; its records wait out the grace.
        Pass total = reconcileEach(sales, Duration.ZERO, Set.copyOf(lapsed));
        try {
            leases.forget(properties.instanceLease(), lapsed);
        } catch (RuntimeException e) { // the next check settles them again: what is settled is not pending
            log.debug("Lapsed API instances {} not forgotten: {}", lapsed, e.toString());
        }
        log.info(
                "API instances {} lapsed: {} of their reservations settled from Postgres, {} released as {}, {}"
                        + " published for a worker",
                lapsed,
                total.settled(),
                total.released(),
                Settler.ABANDONED,
                total.published());
    }

    /**
     * Reconciles each sale ({@link #reconcile(long, Duration, Set)}): one sale's stall (a row lock held open, an
     * unreadable record) holds back no other.
     */
    private Pass reconcileEach(List<Long> sales, Duration minAge, Set<String> lapsed) {
        Pass total = Pass.NOTHING;
        for (long saleId : sales) {
            try {
                total = total.plus(reconcile(saleId, minAge, lapsed));
            } catch (RuntimeException e) {
                if (PostgresTimeouts.isTimeout(e)) {
                    timeouts.increment();
                }
                log.warn("Reconciliation of sale {} stopped early: {}", saleId, e.toString());
            }
        }
        return total;
    }

    /**
     * Settles the sale's reservations that are past their bound. Reads every reservation older than the
     * shortest bound, page by page: any number of ASYNC ones still waiting (a backlog) may sit ahead of a
     * due SYNC one, and a cap on the pages would hide it from every pass.
     */
    Pass reconcile(long saleId) {
        return reconcile(saleId, properties.earliest(), Set.of());
    }

    /** Settles the sale's reservations at least {@code minAge} old, those of {@code lapsed} instances at once. */
    private Pass reconcile(long saleId, Duration minAge, Set<String> lapsed) {
        Pass pass = Pass.NOTHING;
        int offset = 0;
        List<Pending> due;
        do {
            due = pending.olderThan(saleId, minAge, offset, properties.batchSize());
            int before = pass.changed();
            for (Pending reservation : due) {
                pass = pass.plus(settler.settle(saleId, reservation, lapsed));
            }
            int changed = pass.changed() - before;
            // Settled ones left the set, published ones the due range (dated anew); the ones still waiting are skipped
            // on the next page.
            offset += due.size() - changed;
        } while (due.size() == properties.batchSize());
        settledCount.increment(pass.settled());
        releasedCount.increment(pass.released());
        failedCount.increment(pass.failed());
        publishedCount.increment(pass.published());
        return pass;
    }

    private void measureOldest(List<Long> sales) {
        long oldest = 0;
        try {
            for (long saleId : sales) {
                List<Pending> first = pending.olderThan(saleId, Duration.ZERO, 0, 1);
                if (!first.isEmpty()) {
                    oldest = Math.max(oldest, first.getFirst().age().toMillis());
                }
            }
            oldestMillis.set(oldest);
        } catch (RuntimeException e) {
            log.debug("oldest pending reservation not measured: {}", e.toString());
        }
    }

    private List<Long> salesToReconcile() throws DataAccessException {
        return jdbc.sql("select id from sale where ends_at > :since order by id")
                .param("since", Timestamp.from(Instant.now().minus(properties.saleLookback())))
                .query(Long.class)
                .list();
    }
}
