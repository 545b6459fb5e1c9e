package dev.flashsale.api.sale;

import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.SaleStock;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * When a sale's Redis state is rebuilt ({@link SaleRebuild}) without an admin asking: once a purchase or a
 * read finds it missing, and whenever the watch finds an open sale's Redis state gone or behind Postgres.
 */
@Component
public class RebuildWatch {

    private static final Logger log = LoggerFactory.getLogger(RebuildWatch.class);

    private final SaleRebuild rebuilds;
    private final SaleRepository sales;
    private final SaleStock stock;
    private final TaskScheduler scheduler;
    private final RebuildProperties properties;
    private final Clock clock;
    /** Sales this instance has a rebuild queued for: a crowd that finds one missing queues one rebuild. */
    private final Set<Long> requested = ConcurrentHashMap.newKeySet();
    /**
     * Open sales whose rebuild left Redis above Postgres's stock row: Postgres's own books disagree (its
     * stock row against its orders), which no rebuild can mend. Each is rebuilt again only once either
     * figure moves, not every interval for as long as it is open (a keyspace scan each time).
     */
    private final Map<Long, Disagreement> disagreeing = new ConcurrentHashMap<>();

    /** Redis's remaining as the last rebuild left it, and Postgres's stock row then. */
    private record Disagreement(long redis, long postgres) {}

    RebuildWatch(
            SaleRebuild rebuilds,
            SaleRepository sales,
            SaleStock stock,
            TaskScheduler scheduler,
            RebuildProperties properties,
            Clock clock) {
        this.rebuilds = rebuilds;
        this.sales = sales;
        this.stock = stock;
        this.scheduler = scheduler;
        this.properties = properties;
        this.clock = clock;
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
                            rebuilds.rebuild(saleId, reason);
                        } catch (RuntimeException e) {
                            log.warn("rebuild of sale {} ({}) failed: {}", saleId, reason, e.toString());
                        } finally {
                            requested.remove(saleId);
                        }
                    },
                    clock.instant());
        }
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
            rebuildWhatIsBehind(clock.instant());
        } catch (RuntimeException e) { // Redis or Postgres down: the purchases say so; look again next time
            log.debug("rebuild watch failed: {}", e.toString());
        }
    }

    private void rebuildWhatIsBehind(Instant now) {
        List<SaleRepository.OpenSale> open = sales.open(now, now.minus(properties.recentlySold()));
        disagreeing
                .keySet()
                .retainAll(open.stream().map(SaleRepository.OpenSale::id).toList());
        for (SaleRepository.OpenSale sale : open) {
            Optional<SaleCounters> counters = stock.counters(sale.id());
            if (counters.isEmpty() && sale.recentlySold()) {
                rebuilds.rebuild(sale.id(), "Redis lost the state of a sale that was selling");
            } else if (counters.isPresent() && counters.get().remaining() > sale.remaining()) {
                long redis = counters.get().remaining();
                if (!new Disagreement(redis, sale.remaining()).equals(disagreeing.get(sale.id()))) {
                    rebuildBehind(sale, redis);
                }
            } else {
                disagreeing.remove(sale.id());
            }
        }
    }

    private void rebuildBehind(SaleRepository.OpenSale sale, long redis) {
        SaleRebuild.Outcome outcome =
                rebuilds.rebuild(sale.id(), "Redis remaining " + redis + " > Postgres " + sale.remaining());
        if (outcome instanceof SaleRebuild.Outcome.Rebuilt rebuilt && rebuilt.remaining() > sale.remaining()) {
            disagreeing.put(sale.id(), new Disagreement(rebuilt.remaining(), sale.remaining()));
            log.warn(
                    "sale {}: Postgres's stock row ({} left) disagrees with its orders ({} left after the rebuild);"
                            + " not rebuilt again until either moves: check its conservation view",
                    sale.id(),
                    sale.remaining(),
                    rebuilt.remaining());
        }
    }
}
