package dev.flashsale.api.admin;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
class StockController {

    private final Conservation conservation;

    StockController(Conservation conservation) {
        this.conservation = conservation;
    }

    @GetMapping("/api/v1/admin/sales/{id}/stock")
    Conservation.StockView stock(@PathVariable long id) {
        return conservation.check(id);
    }
}
