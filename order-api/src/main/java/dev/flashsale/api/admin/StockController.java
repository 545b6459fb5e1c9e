package dev.flashsale.api.admin;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.sale.SaleRebuild;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class StockController {

    private final Conservation conservation;
    private final SaleRebuild rebuilds;

    StockController(Conservation conservation, SaleRebuild rebuilds) {
        this.conservation = conservation;
        this.rebuilds = rebuilds;
    }

    /**
     * Rebuilds the sale's Redis state from Postgres now (purchases of it answer 503 SALE_REBUILDING
     * meanwhile and for app.rebuild.freeze after), then answers the conservation view.
     */
    @PostMapping(path = "/api/v1/admin/sales/{id}/rebuild", produces = MediaType.APPLICATION_JSON_VALUE)
    Conservation.StockView rebuild(@PathVariable long id) {
        switch (rebuilds.rebuild(id, "requested by an admin")) {
            case SaleRebuild.Outcome.Busy busy ->
                throw new ApiProblem(
                        ProblemCode.REBUILD_IN_PROGRESS, "Another instance is rebuilding this sale right now.");
            case SaleRebuild.Outcome.Lapsed lapsed ->
                throw new ApiProblem(
                        ProblemCode.REBUILD_LAPSED,
                        "The rebuild outlasted its freeze of the sale (app.rebuild.lease) and wrote nothing; try again.",
                        rebuilds.properties().retryAfter());
            case SaleRebuild.Outcome.Rebuilt rebuilt -> {}
        }
        return conservation.check(id);
    }

    @GetMapping(path = "/api/v1/admin/sales/{id}/stock", produces = MediaType.APPLICATION_JSON_VALUE)
    Conservation.StockView stock(@PathVariable long id) {
        return conservation.check(id);
    }
}
