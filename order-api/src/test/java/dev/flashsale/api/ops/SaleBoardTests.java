package dev.flashsale.api.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.sale.Sale;
import dev.flashsale.api.sale.SaleState;
import dev.flashsale.common.stock.SaleCounters;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SaleBoardTests {

    private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
    private static final Sale SALE =
            new Sale(7, "sku", "name", 100, 10, 2, NOW.minusSeconds(60), NOW.plusSeconds(3600), NOW.minusSeconds(120));

    @Test
    void an_open_sale_with_stock_is_selling() {
        var summary = SaleBoardController.summary(SALE, Optional.of(new SaleCounters(10, 4, 1)), NOW);
        assertThat(summary.state()).isEqualTo(SaleState.ACTIVE);
        assertThat(summary.selling()).isTrue();
        assertThat(summary.redisRemaining()).isEqualTo(4);
    }

    @Test
    void a_sale_whose_redis_stock_is_missing_inside_its_window_is_rebuilding() {
        var summary = SaleBoardController.summary(SALE, Optional.empty(), NOW);
        assertThat(summary.state()).isEqualTo(SaleState.REBUILDING);
        assertThat(summary.selling()).isFalse();
        assertThat(summary.why()).contains("Redis holds no stock").contains("rebuild");
    }

    @Test
    void a_sold_out_an_upcoming_and_an_ended_sale_say_so() {
        assertThat(SaleBoardController.summary(SALE, Optional.of(new SaleCounters(10, 0, 0)), NOW)
                        .why())
                .isEqualTo("sold out: no unit left in Redis");
        assertThat(SaleBoardController.summary(SALE, Optional.of(new SaleCounters(10, 10, 0)), NOW.minusSeconds(600))
                        .why())
                .startsWith("not open yet: starts at");
        assertThat(SaleBoardController.summary(SALE, Optional.empty(), NOW.plusSeconds(7200))
                        .why())
                .startsWith("ended at");
    }
}
