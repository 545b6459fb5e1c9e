package dev.flashsale.api.ops;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.flashsale.api.door.SaleLine;
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
import org.jspecify.annotations.Nullable;
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
    private final SaleLine lines;
    private final Clock clock;

    SaleBoardController(SaleCatalogue catalogue, SaleStock stock, SaleLine lines, Clock clock) {
        this.catalogue = catalogue;
        this.stock = stock;
        this.lines = lines;
        this.clock = clock;
    }

    /**
     * A sale's line (sales with few units: first come, first served).
     *
     * @param serving places before this one are served (units asked for before them)
     * @param handedOut places handed out (units asked for by every place so far)
     * @param waiting places handed out that are not served yet
     * @param givenUp units the places ahead left to the next ones (the front moved on by these)
     */
    record Line(long serving, long handedOut, long waiting, long givenUp) {}

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
            String why,
            // Left out for a sale without a line (a sale with many units, or nobody bought yet).
            @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable
            Line line) {}

    @GetMapping(path = "/api/v1/admin/sales", produces = MediaType.APPLICATION_JSON_VALUE)
    List<SaleSummary> recent(@RequestParam(defaultValue = "10") @Min(1) @Max(100) int limit) {
        Instant now = clock.instant();
        return catalogue.recent(limit).stream()
                .map(sale -> summary(sale, stock.counters(sale.id()), now, line(sale.id())))
                .toList();
    }

    @GetMapping(path = "/api/v1/admin/sales/{id}/state", produces = MediaType.APPLICATION_JSON_VALUE)
    SaleSummary one(@PathVariable long id) {
        Sale sale = catalogue.get(id);
        return summary(sale, stock.counters(id), clock.instant(), line(id));
    }

    private @Nullable Line line(long saleId) {
        return lines.read(saleId)
                .map(front -> new Line(
                        front.front(), front.next(), Math.max(0, front.next() - front.front()), front.givenUp()))
                .orElse(null);
    }

    static SaleSummary summary(Sale sale, Optional<SaleCounters> counters, Instant now) {
        return summary(sale, counters, now, null);
    }

    static SaleSummary summary(Sale sale, Optional<SaleCounters> counters, Instant now, @Nullable Line line) {
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
                why,
                line);
    }
}
