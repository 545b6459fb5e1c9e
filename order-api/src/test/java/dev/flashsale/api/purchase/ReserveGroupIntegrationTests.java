package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The reserves of concurrent SYNC purchases go to Redis together, made by the batch that writes them
 * (BatchReserves, decision 0024), and the sale still sells exactly its stock, one unit a shopper, counted in
 * Redis and in Postgres.
 */
class ReserveGroupIntegrationTests extends ApiIntegrationTest {

    @Autowired
    MeterRegistry meters;

    private DistributionSummary rounds(String path) {
        return meters.get("flashsale.purchase.group.size").tag("path", path).summary();
    }

    @Test
    void three_hundred_shoppers_at_fifty_units_share_reserve_calls_and_buy_exactly_the_stock() throws Exception {
        api.setMode("SYNC");
        long sale = api.createSale(50, 1);
        DistributionSummary batches = rounds("sync");
        long batchesBefore = batches.count();
        double ordersBefore = batches.totalAmount();

        List<Api.Response> responses =
                Api.concurrently(300, i -> api.purchaseInLine(sale, "grouped-" + sale + "-" + i, 1, 40));

        Map<Integer, Long> statuses =
                responses.stream().collect(Collectors.groupingBy(Api.Response::status, Collectors.counting()));
        assertThat(statuses).containsOnly(Map.entry(201, 50L), Map.entry(409, 250L));
        assertThat(responses.stream().filter(r -> r.status() == 409).map(Api.Response::code))
                .containsOnly("SOLD_OUT");
        String saleKey = "{sale:" + sale + "}";
        assertThat(redis.opsForHash().multiGet(saleKey, List.of("remaining", "held", "buyers")))
                .as("remaining, held, buyers")
                .containsExactly("0", "0", "50");
        assertThat(redis.opsForHash().values(saleKey + ":users")).hasSize(50).containsOnly("1");
        assertThat(redis.opsForZSet().zCard(saleKey + ":pending")).isZero();
        assertThat(pgConfirmedOrders(sale)).isEqualTo(50);
        assertThat(pgRemaining(sale)).isZero();
        long syncBatches = batches.count() - batchesBefore;
        double reserves = batches.totalAmount() - ordersBefore;
        assertThat(reserves)
                .as("purchases that reached Redis (the rest were refused from memory once it sold out)")
                .isGreaterThanOrEqualTo(50);
        assertThat(syncBatches)
                .as("batches, each one reserve call, for %.0f purchases (max %.0f in one)", reserves, batches.max())
                .isLessThan((long) reserves);
    }
}
