package dev.flashsale.api.sale;

import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.StockLedger;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Rebuilds a sale's Redis state (stock, per-user totals, reservation records) from Postgres when Redis
 * lost it (a restart without its append-only file, FLUSHALL) or is behind it (a failover to a replica
 * that missed the last writes, an order reserved before a loss written after the rebuild): on the first
 * purchase or read that finds it missing, on the watch's check of every open sale, and on an admin's
 * request.
 *
 * <p>Safe with purchases running and with several instances: one transaction takes the rebuild's advisory
 * lock (another instance's rebuild of the same sale makes this one a no-op, and leaves no hold), holds the
 * sale in Redis (reserve answers REBUILDING), lists its reservation records (a keyspace SCAN, before any row
 * is locked), then locks the sale's stock rows, so no order commits while the script rewrites Redis from
 * what Postgres holds plus those reservations. The script writes only while the hold is still its own: a
 * rebuild that outlasted its lease (reservations were taken meanwhile) writes nothing.
 */
@Service
public class SaleRebuild {

    private static final Logger log = LoggerFactory.getLogger(SaleRebuild.class);

    private final SaleCatalogue catalogue;
    private final SaleRepository sales;
    private final StockLedger ledger;
    private final TransactionTemplate transactions;
    private final ApplicationEventPublisher events;
    private final TaskScheduler scheduler;
    private final RebuildProperties properties;
    private final Clock clock;
    /** Sales this instance has a rebuild queued for: a crowd that finds one missing queues one rebuild. */
    private final Set<Long> requested = ConcurrentHashMap.newKeySet();

    SaleRebuild(
            SaleCatalogue catalogue,
            SaleRepository sales,
            StockLedger ledger,
            TransactionTemplate transactions,
            ApplicationEventPublisher events,
            TaskScheduler scheduler,
            RebuildProperties properties,
            Clock clock) {
        this.catalogue = catalogue;
        this.sales = sales;
        this.ledger = ledger;
        this.transactions = transactions;
        this.events = events;
        this.scheduler = scheduler;
        this.properties = properties;
        this.clock = clock;
    }

    /**
     * What a rebuild did: Rebuilt with the new counters, Busy (another instance is rebuilding it), or
     * Lapsed (it outlasted its lease and wrote nothing; the sale sells on its old state).
     */
    public sealed interface Outcome {
        record Rebuilt(long saleId, long remaining, long held, long confirmed) implements Outcome {}

        record Busy(long saleId) implements Outcome {}

        record Lapsed(long saleId) implements Outcome {}
    }

    public RebuildProperties properties() {
        return properties;
    }

    /** Queues a rebuild of a sale found missing in Redis; returns at once. */
    public void request(long saleId, String reason) {
        if (requested.add(saleId)) {
            scheduler.schedule(
                    () -> {
                        try {
                            rebuild(saleId, reason);
                        } catch (RuntimeException e) {
                            log.warn("rebuild of sale {} ({}) failed: {}", saleId, reason, e.toString());
                        } finally {
                            requested.remove(saleId);
                        }
                    },
                    clock.instant());
        }
    }

    /** Rebuilds the sale's Redis state from Postgres now. */
    public Outcome rebuild(long saleId, String reason) {
        Sale sale = catalogue.get(saleId);
        SaleRepository.Ledger[] read = new SaleRepository.Ledger[1];
        Outcome outcome = transactions.execute(status -> {
            if (!sales.lockForRebuild(saleId)) {
                return new Outcome.Busy(saleId);
            }
            String hold = ledger.hold(saleId, properties.lease());
            List<UUID> recorded = ledger.reservationRecords(saleId);
            sales.lockStock(saleId);
            SaleRepository.Ledger ledgerOf = sales.ledgerOf(saleId);
            Optional<SaleCounters> counters = ledger.rebuild(
                    saleId,
                    hold,
                    sale.totalStock(),
                    sale.perUserLimit(),
                    sale.startsAt(),
                    sale.endsAt(),
                    properties.hold(),
                    recorded,
                    ledgerOf.orders());
            if (counters.isEmpty()) {
                return new Outcome.Lapsed(saleId);
            }
            read[0] = ledgerOf;
            return new Outcome.Rebuilt(
                    saleId, counters.get().remaining(), counters.get().held(), ledgerOf.confirmedUnits());
        });
        if (outcome instanceof Outcome.Lapsed) {
            log.warn(
                    "rebuild of sale {} ({}) outlasted its lease of {} and wrote nothing",
                    saleId,
                    reason,
                    properties.lease());
            return outcome;
        }
        if (read[0] != null) {
            events.publishEvent(new SaleRebuilt(saleId, read[0].keyed()));
        }
        log.info("sale {} rebuilt from Postgres ({}): {}", saleId, reason, outcome);
        return outcome;
    }

    /**
     * Every instance, every watch interval, for as long as a sale is open: every open sale whose Redis
     * remaining exceeds Postgres's is rebuilt, and so is every open sale that took orders lately and whose
     * state is gone. Redis falls behind Postgres when it lost writes that Postgres has (the last second of
     * an AOF, a replica behind its master), and again whenever an order reserved before a loss lands in
     * Postgres after the rebuild (a queued ASYNC message, however deep the backlog): no window after a
     * restart can bound that. A quiet sale whose state is gone comes back on its next purchase or read.
     * Postgres is read before Redis, so a sale that is merely busy never looks behind: Postgres only counts
     * units Redis already took.
     */
    @Scheduled(
            initialDelayString = "${app.rebuild.watch-interval:2s}",
            fixedDelayString = "${app.rebuild.watch-interval:2s}")
    void watch() {
        try {
            repair(clock.instant());
        } catch (RuntimeException e) { // Redis or Postgres down: the purchases say so; look again next time
            log.debug("rebuild watch failed: {}", e.toString());
        }
    }

    private void repair(Instant now) {
        for (SaleRepository.OpenSale sale : sales.open(now, now.minus(properties.recentlySold()))) {
            Optional<SaleCounters> counters = ledger.counters(sale.id());
            if (counters.isEmpty() && sale.recentlySold()) {
                rebuild(sale.id(), "Redis lost the state of a sale that was selling");
            } else if (counters.isPresent() && counters.get().remaining() > sale.remaining()) {
                rebuild(sale.id(), "Redis remaining " + counters.get().remaining() + " > Postgres " + sale.remaining());
            }
        }
    }
}
