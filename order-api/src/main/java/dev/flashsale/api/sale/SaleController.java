package dev.flashsale.api.sale;

import dev.flashsale.common.stock.SaleCounters;
import dev.flashsale.common.stock.SaleStock;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping(path = "/api/v1/sales", produces = MediaType.APPLICATION_JSON_VALUE)
class SaleController {

    private final SaleCatalogue catalogue;
    private final SaleStock stock;
    private final RebuildWatch rebuilds;
    private final Clock clock;

    SaleController(SaleCatalogue catalogue, SaleStock stock, RebuildWatch rebuilds, Clock clock) {
        this.catalogue = catalogue;
        this.stock = stock;
        this.rebuilds = rebuilds;
        this.clock = clock;
    }

    record SaleView(
            long id,
            String sku,
            String name,
            long priceCents,
            int stock,
            int perUserLimit,
            Instant startsAt,
            Instant endsAt,
            Instant createdAt,
            long remaining,
            SaleState state) {}

    @PostMapping
    @Operation(summary = "Create a sale (admin); loads its stock into Redis")
    @ApiResponse(
            responseCode = "201",
            description = "The sale",
            headers = @Header(name = "Location", description = "The sale", schema = @Schema(type = "string")))
    ResponseEntity<SaleView> create(@Valid @RequestBody NewSale request) {
        SaleView sale = view(catalogue.create(request));
        return ResponseEntity.created(URI.create("/api/v1/sales/" + sale.id())).body(sale);
    }

    @GetMapping("/{id}")
    @Operation(summary = "A sale, its remaining stock and state (public)")
    @ApiResponse(responseCode = "200", description = "The sale")
    SaleView get(@PathVariable long id) {
        return view(catalogue.get(id));
    }

    /**
     * Remaining comes from Redis, the source of truth during a sale. A sale Redis lost before its end is
     * REBUILDING, and reading it is enough to have it rebuilt.
     */
    private SaleView view(Sale sale) {
        var counters = stock.counters(sale.id());
        long remaining = counters.map(SaleCounters::remaining).orElse(0L);
        Instant now = clock.instant();
        SaleState state = counters.isPresent() ? sale.stateAt(now, remaining) : SaleState.ENDED;
        if (counters.isEmpty() && now.isBefore(sale.endsAt())) {
            rebuilds.request(sale.id(), "a read found its Redis state missing");
            state = SaleState.REBUILDING;
        }
        return new SaleView(
                sale.id(),
                sale.sku(),
                sale.name(),
                sale.priceCents(),
                sale.totalStock(),
                sale.perUserLimit(),
                sale.startsAt(),
                sale.endsAt(),
                sale.createdAt(),
                remaining,
                state);
    }
}
