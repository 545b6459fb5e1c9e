package dev.flashsale.api.ops;

import dev.flashsale.api.sale.Sale;
import dev.flashsale.api.sale.SaleCatalogue;
import dev.flashsale.api.sale.SaleState;
import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.SaleStock;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Recent sales for the console, each with its state as shoppers see it and, when it does not sell, why.
 * The stock and order counts of one sale come from the conservation view
 * ({@code /api/v1/admin/sales/{id}/stock}).
 */
@RestController
class SaleBoardController {

    private final SaleCatalogue catalogue;
    private final SaleStock stock;
    private final Clock clock;

    SaleBoardController(SaleCatalogue catalogue, SaleStock stock, Clock clock) {
        this.catalogue = catalogue;
        this.stock = stock;
        this.clock = clock;
    }

    record SaleSummary(
            long id,
            String sku,
            String name,
            int stock,
            Instant startsAt,
            Instant endsAt,
            long redisRemaining,
            SaleState state,
            boolean selling,
            String why) {}

    @GetMapping(path = "/api/v1/admin/sales", produces = MediaType.APPLICATION_JSON_VALUE)
    List<SaleSummary> recent(@RequestParam(defaultValue = "10") @Min(1) @Max(100) int limit) {
        Instant now = clock.instant();
        return catalogue.recent(limit).stream()
                .map(sale -> summary(sale, stock.counters(sale.id()), now))
                .toList();
    }

    @GetMapping(path = "/api/v1/admin/sales/{id}/state", produces = MediaType.APPLICATION_JSON_VALUE)
    SaleSummary one(@PathVariable long id) {
        Sale sale = catalogue.get(id);
        return summary(sale, stock.counters(id), clock.instant());
    }

    static SaleSummary summary(Sale sale, Optional<SaleCounters> counters, Instant now) {
        long remaining = counters.map(SaleCounters::remaining).orElse(0L);
        boolean lost = counters.isEmpty() && now.isBefore(sale.endsAt());
        SaleState state =
                lost ? SaleState.REBUILDING : counters.isEmpty() ? SaleState.ENDED : sale.stateAt(now, remaining);
        String why = switch (state) {
            case ACTIVE -> "selling";
            case UPCOMING -> "not open yet: starts at " + sale.startsAt();
            case SOLD_OUT -> "sold out: no unit left in Redis";
            case ENDED -> "ended at " + sale.endsAt();
            case REBUILDING ->
                "Redis holds no stock for this sale although its window is open: it is rebuilt from Postgres"
                        + " on the next purchase or read of the sale, or by POST /api/v1/admin/sales/{id}/rebuild";
        };
        return new SaleSummary(
                sale.id(),
                sale.sku(),
                sale.name(),
                sale.totalStock(),
                sale.startsAt(),
                sale.endsAt(),
                remaining,
                state,
                state == SaleState.ACTIVE,
                why);
    }
}
