package dev.flashsale.api.sale;

import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.StockRebuild;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Rebuilds a sale's Redis state (stock, per-user totals, reservation records) from Postgres when Redis
 * lost it (a restart without its append-only file, FLUSHALL) or is behind it (a failover to a replica
 * that missed the last writes, an order reserved before a loss written after the rebuild): on the first
 * purchase or read that finds it missing and on the watch's check of every open sale ({@link RebuildWatch}),
 * and on an admin's request.
 *
 * <p>Safe with purchases running and with several instances: one transaction takes the rebuild's advisory
 * lock (another instance's rebuild of the same sale makes this one a no-op, and leaves no freeze), freezes the
 * sale in Redis (reserve answers REBUILDING), lists its reservation records (a keyspace SCAN, before any row
 * is locked), then locks the sale's stock rows, so no order commits while the script rewrites Redis from
 * what Postgres holds plus those reservations. The script writes only while the freeze is still its own: a
 * rebuild that outlasted its lease (reservations were taken meanwhile) writes nothing.
 */
@Service
public class SaleRebuild {

    private static final Logger log = LoggerFactory.getLogger(SaleRebuild.class);

    private final SaleCatalogue catalogue;
    private final SaleRepository sales;
    private final StockRebuild rebuilds;
    private final TransactionTemplate transactions;
    private final ApplicationEventPublisher events;
    private final RebuildProperties properties;

    SaleRebuild(
            SaleCatalogue catalogue,
            SaleRepository sales,
            StockRebuild rebuilds,
            TransactionTemplate transactions,
            ApplicationEventPublisher events,
            RebuildProperties properties) {
        this.catalogue = catalogue;
        this.sales = sales;
        this.rebuilds = rebuilds;
        this.transactions = transactions;
        this.events = events;
        this.properties = properties;
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

    /** Rebuilds the sale's Redis state from Postgres now. */
    public Outcome rebuild(long saleId, String reason) {
        Sale sale = catalogue.get(saleId);
        SaleRepository.Ledger[] read = new SaleRepository.Ledger[1];
        Outcome outcome = transactions.execute(status -> {
            if (!sales.lockForRebuild(saleId)) {
                return new Outcome.Busy(saleId);
            }
            String freeze = rebuilds.freeze(saleId, properties.lease());
            List<UUID> recorded = rebuilds.reservationRecords(saleId);
            sales.lockStock(saleId);
            SaleRepository.Ledger ledgerOf = sales.ledgerOf(saleId);
            Optional<SaleCounters> counters = rebuilds.rebuild(
                    saleId,
                    freeze,
                    sale.totalStock(),
                    sale.perUserLimit(),
                    sale.startsAt(),
                    sale.endsAt(),
                    properties.freeze(),
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
}
