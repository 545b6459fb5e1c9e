package dev.flashsale.api.admin;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
class StockController {

    private final Conservation conservation;

    StockController(Conservation conservation) {
        this.conservation = conservation;
    }

    @GetMapping(path = "/api/v1/admin/sales/{id}/stock", produces = MediaType.APPLICATION_JSON_VALUE)
    Conservation.StockView stock(@PathVariable long id) {
        return conservation.check(id);
    }
}
