package dev.flashsale.api.purchase;

import dev.flashsale.common.order.PurchasePath;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/** The purchases' outcomes by path ({@code flashsale.purchases}), and those AUTO sent down the other path. */
@Component
class PurchaseCounts {

    private final MeterRegistry meters;

    PurchaseCounts(MeterRegistry meters) {
        this.meters = meters;
    }

    void count(PurchasePath mode, String outcome) {
        meters.counter("flashsale.purchases", "mode", mode.name(), "outcome", outcome)
                .increment();
    }

    void diverted(PurchasePath from, PurchasePath to) {
        meters.counter("flashsale.purchase.diverted", "from", from.name(), "to", to.name())
                .increment();
    }
}
