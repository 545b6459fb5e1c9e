package dev.flashsale.worker.sweep;

import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.StockLedger;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Settles reservations that stayed RESERVED past the grace period: the API crashed or gave up between
 * reserving and handing the order to the broker. When Postgres has the order (written synchronously, or
 * by a worker while the API's PUBLISHED step was lost), Redis follows Postgres; otherwise nobody was told
 * the order exists and its units go back. Every step is a compare-and-set script, so several workers may
 * sweep at once.
 */
@Component
class AbandonedReservationSweeper {

    /** The code on a reservation given back because nobody ever handed it off. */
    static final String ABANDONED = "ABANDONED";

    private static final Logger log = LoggerFactory.getLogger(AbandonedReservationSweeper.class);

    private static final Set<ReservationState> UNCLAIMED = EnumSet.of(ReservationState.RESERVED);

    private final JdbcClient jdbc;
    private final StockLedger ledger;
    private final OrderStore store;
    private final SweeperProperties properties;
    private final Counter released;
    private final Counter settled;

    AbandonedReservationSweeper(
            JdbcClient jdbc,
            StockLedger ledger,
            OrderStore store,
            SweeperProperties properties,
            MeterRegistry registry) {
        this.jdbc = jdbc;
        this.ledger = ledger;
        this.store = store;
        this.properties = properties;
        this.released = sweptCounter(registry, "released");
        this.settled = sweptCounter(registry, "settled");
    }

    private static Counter sweptCounter(MeterRegistry registry, String outcome) {
        return Counter.builder("flashsale.worker.swept")
                .description("Stale reservations settled by the sweeper, by outcome")
                .tag("outcome", outcome)
                .register(registry);
    }

    /** What one sweep changed. */
    record Sweep(int released, int settled) {

        static final Sweep NOTHING = new Sweep(0, 0);

        Sweep plus(Sweep other) {
            return new Sweep(released + other.released, settled + other.settled);
        }

        boolean changedAnything() {
            return released + settled > 0;
        }
    }

    @Scheduled(fixedDelayString = "${app.sweeper.interval}", initialDelayString = "${app.sweeper.interval}")
    void sweep() {
        Instant now = Instant.now();
        Sweep total = Sweep.NOTHING;
        try {
            for (long saleId : salesToSweep(now)) {
                total = total.plus(sweep(saleId, now));
            }
        } catch (DataAccessException e) {
            log.warn("Sweep stopped early: {}", e.toString());
        }
        if (total.changedAnything()) {
            log.info(
                    "Swept stale reservations: {} released as {}, {} settled from Postgres",
                    total.released(),
                    ABANDONED,
                    total.settled());
        }
    }

    /** Settles the sale's reservations made before {@code now} minus the grace period. */
    Sweep sweep(long saleId, Instant now) {
        int releasedNow = 0;
        int settledNow = 0;
        for (UUID orderId : ledger.reservedBefore(saleId, now.minus(properties.grace()), properties.batchSize())) {
            Optional<StoredOrder> stored = store.find(orderId);
            if (stored.isPresent()) {
                StoredOrder order = stored.get();
                if (ledger.settle(saleId, orderId, order.status(), order.failureCode())) {
                    settledNow++;
                }
            } else if (ledger.release(saleId, orderId, UNCLAIMED, ReservationState.RELEASED, ABANDONED)
                    .changed()) {
                releasedNow++;
            }
        }
        released.increment(releasedNow);
        settled.increment(settledNow);
        return new Sweep(releasedNow, settledNow);
    }

    private List<Long> salesToSweep(Instant now) {
        return jdbc.sql("select id from sale where ends_at > :since order by id")
                .param("since", Timestamp.from(now.minus(properties.saleLookback())))
                .query(Long.class)
                .list();
    }
}
