package dev.flashsale.api.ops;

import dev.flashsale.api.admin.Conservation;
import dev.flashsale.api.sale.Sale;
import dev.flashsale.api.sale.SaleCatalogue;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * What the dashboard and the alerts need that no other meter says: the order queues' depth (from the
 * broker's management API, so a scrape never waits for the broker) and whether the open sales still
 * balance (the conservation view, checked for the newest open sales). NaN while unknown.
 */
@Component
class OpsMeters {

    private static final Logger log = LoggerFactory.getLogger(OpsMeters.class);
    static final int SALES_CHECKED = 20;

    private final BrokerQueues queues;
    private final SaleCatalogue catalogue;
    private final Conservation conservation;
    private final Clock clock;
    private volatile BrokerQueues.QueueView orders;
    private volatile BrokerQueues.QueueView retries;
    private volatile BrokerQueues.QueueView deadLetters;
    private volatile double unbalanced = Double.NaN;
    private volatile double checked = Double.NaN;

    OpsMeters(
            BrokerQueues queues,
            SaleCatalogue catalogue,
            Conservation conservation,
            Clock clock,
            MeterRegistry meters) {
        this.queues = queues;
        this.catalogue = catalogue;
        this.conservation = conservation;
        this.clock = clock;
        this.orders = this.retries = this.deadLetters = BrokerQueues.unknown("", "not read yet");
        queueGauge(meters, "orders", m -> m.orders);
        queueGauge(meters, "retry", m -> m.retries);
        queueGauge(meters, "dead-letter", m -> m.deadLetters);
        Gauge.builder("flashsale.conservation.unbalanced.sales", this, m -> m.unbalanced)
                .description("Open sales whose Redis and Postgres counts do not balance (newest " + SALES_CHECKED
                        + " checked)")
                .register(meters);
        Gauge.builder("flashsale.conservation.checked.sales", this, m -> m.checked)
                .description("Open sales the last conservation check covered")
                .register(meters);
    }

    /** The gauge holds this bean (Micrometer keeps only a weak reference to a gauge's object). */
    private void queueGauge(MeterRegistry meters, String queue, Function<OpsMeters, BrokerQueues.QueueView> view) {
        Gauge.builder("flashsale.queue.messages", this, m -> orNaN(view.apply(m).depth()))
                .description("Messages in the queue, ready and unacknowledged, as the broker counts them")
                .tag("queue", queue)
                .register(meters);
    }

    private static double orNaN(@Nullable Long value) {
        return value == null ? Double.NaN : value;
    }

    @Scheduled(fixedDelayString = "${app.ops.broker-sample-interval:5s}")
    void sampleQueues() {
        orders = queues.orders();
        retries = queues.retries();
        deadLetters = queues.deadLetters();
    }

    @Scheduled(fixedDelayString = "${app.ops.conservation-check-interval:15s}")
    void checkConservation() {
        try {
            Instant now = clock.instant();
            List<Sale> open = catalogue.recent(SALES_CHECKED).stream()
                    .filter(sale -> !now.isBefore(sale.startsAt()) && now.isBefore(sale.endsAt()))
                    .toList();
            long broken = open.stream()
                    .filter(sale -> !conservation.check(sale.id()).balanced())
                    .count();
            unbalanced = broken;
            checked = open.size();
        } catch (RuntimeException e) {
            log.debug("conservation check failed: {}", e.toString());
            unbalanced = Double.NaN;
            checked = Double.NaN;
        }
    }
}
