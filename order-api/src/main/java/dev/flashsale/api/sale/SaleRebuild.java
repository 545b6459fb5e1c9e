package dev.flashsale.api.sale;

import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.StockLedger;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Rebuilds a sale's Redis state (stock, per-user totals, reservation records) from Postgres when Redis
 * lost it (a restart without its append-only file, FLUSHALL) or is behind it (a failover to a replica
 * that missed the last writes): on the first purchase or read that finds it missing, on a check after
 * every Redis restart or failover, and on an admin's request.
 *
 * <p>Safe with purchases running and with several instances: the sale is held in Redis first (reserve
 * answers REBUILDING), then one transaction takes the rebuild's advisory lock (another instance's rebuild
 * of the same sale makes this one a no-op) and locks the sale's stock rows, so no order commits while
 * the script rewrites Redis from what Postgres holds plus the reservations Redis still has.
 */
@Service
public class SaleRebuild {

    private static final Logger log = LoggerFactory.getLogger(SaleRebuild.class);

    /** The problem code of a purchase refused while its sale's Redis state is missing or rebuilt. */
    public static final String REBUILDING = "SALE_REBUILDING";

    /** Where the instances record which Redis process (run_id) they last saw, and until when they watch. */
    static final String INCARNATION_KEY = "flashsale:redis-incarnation";

    private final SaleCatalogue catalogue;
    private final SaleRepository sales;
    private final StockLedger ledger;
    private final StringRedisTemplate redis;
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
            StringRedisTemplate redis,
            TransactionTemplate transactions,
            ApplicationEventPublisher events,
            TaskScheduler scheduler,
            RebuildProperties properties,
            Clock clock) {
        this.catalogue = catalogue;
        this.sales = sales;
        this.ledger = ledger;
        this.redis = redis;
        this.transactions = transactions;
        this.events = events;
        this.scheduler = scheduler;
        this.properties = properties;
        this.clock = clock;
    }

    /** What a rebuild did: Rebuilt with the new counters, or Busy (another instance is rebuilding it). */
    public sealed interface Outcome {
        record Rebuilt(long saleId, long remaining, long held, long confirmed) implements Outcome {}

        record Busy(long saleId) implements Outcome {}
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
                            watchFrom(clock.instant());
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
        ledger.hold(saleId, properties.lease());
        SaleRepository.Ledger[] read = new SaleRepository.Ledger[1];
        Outcome outcome = transactions.execute(status -> {
            if (!sales.lockForRebuild(saleId)) {
                return new Outcome.Busy(saleId);
            }
            read[0] = sales.ledgerOf(saleId);
            SaleCounters counters = ledger.rebuild(
                    saleId,
                    sale.totalStock(),
                    sale.perUserLimit(),
                    sale.startsAt(),
                    sale.endsAt(),
                    properties.hold(),
                    read[0].orders());
            return new Outcome.Rebuilt(saleId, counters.remaining(), counters.held(), read[0].confirmedUnits());
        });
        if (read[0] != null) {
            events.publishEvent(new SaleRebuilt(saleId, read[0].keyed()));
        }
        log.info("sale {} rebuilt from Postgres ({}): {}", saleId, reason, outcome);
        return outcome;
    }

    /**
     * Every instance, every watch interval: has Redis restarted or failed over (another run_id than the
     * one an instance recorded; a restart that kept its AOF, a promoted replica, keep the record)? Then, for the watch window, every open sale whose Redis remaining exceeds
     * Postgres's is rebuilt (Redis lost writes that Postgres has: the last second of an AOF, a replica
     * behind its master), and so is every open sale that took orders lately and whose state is gone. A
     * quiet sale whose state is gone comes back on its next purchase or read. Postgres is read before Redis, so a sale that is merely busy never looks behind:
     * Postgres only counts units Redis already took.
     */
    @Scheduled(fixedDelayString = "${app.rebuild.watch-interval:2s}")
    void watch() {
        Instant now = clock.instant();
        Instant watchUntil;
        try {
            watchUntil = watchUntil(now);
        } catch (RuntimeException e) { // Redis down: the purchases say so; look again next time
            log.debug("Redis incarnation check failed: {}", e.toString());
            return;
        }
        if (now.isBefore(watchUntil)) {
            repair(now);
        }
    }

    private Instant watchUntil(Instant now) {
        String runId = runId();
        String seen = redis.opsForValue().get(INCARNATION_KEY);
        int separator = seen == null ? -1 : seen.indexOf('|');
        if (separator > 0 && seen.substring(0, separator).equals(runId)) {
            return Instant.ofEpochMilli(Long.parseLong(seen.substring(separator + 1)));
        }
        if (seen == null) {
            // First sight (a new deployment, or a Redis that lost everything, the marker with it): nothing
            // can be behind, and a sale whose state is gone comes back on its next purchase or read.
            redis.opsForValue().setIfAbsent(INCARNATION_KEY, runId + "|0");
            return Instant.EPOCH;
        }
        Instant until = now.plus(properties.watchWindow());
        redis.opsForValue().set(INCARNATION_KEY, runId + "|" + until.toEpochMilli());
        log.info(
                "Redis is a new process ({} -> {}): checking open sales against Postgres until {}",
                separator > 0 ? seen.substring(0, separator) : "unknown",
                runId,
                until);
        return until;
    }

    /**
     * A sale's state was lost, so Redis lost more: orders reserved before the loss may still land in
     * Postgres (queued messages), making rebuilt sales behind it. Every instance watches for the window.
     */
    private void watchFrom(Instant now) {
        redis.opsForValue()
                .set(
                        INCARNATION_KEY,
                        runId() + "|" + now.plus(properties.watchWindow()).toEpochMilli());
    }

    private String runId() {
        Properties info = redis.execute((RedisCallback<Properties>)
                connection -> connection.serverCommands().info("server"));
        String runId = info == null ? null : info.getProperty("run_id");
        if (runId == null) {
            throw new IllegalStateException("INFO server has no run_id");
        }
        return runId;
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
