package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * {@code Prefer: wait} at a small door (4 purchases at once, no line). No worker runs here: an accepted
 * order stays QUEUED, so each wait lasts its whole N seconds.
 */
@TestPropertySource(properties = {"app.door.algorithm=fixed", "app.door.max-limit=4", "app.door.line.enabled=false"})
class PreferWaitIntegrationTests extends ApiIntegrationTest {

    @AfterEach
    void syncMode() {
        api.setMode("SYNC");
    }

    @Test
    void shoppers_waiting_for_their_orders_keep_nobody_out() throws Exception {
        api.setMode("ASYNC");
        long sale = api.createSale(100, 1);
        List<CompletableFuture<Api.Response>> waiting = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int n = i;
            waiting.add(CompletableFuture.supplyAsync(
                    () -> api.purchase(sale, "waiter-" + sale + "-" + n, 1, "Prefer", "wait=4")));
            Thread.sleep(150);
        }

        Api.Response newcomer = api.purchase(sale, "newcomer-" + sale, 1);

        assertThat(newcomer.status()).as(newcomer.toString()).isEqualTo(202);
        assertThat(waiting).allSatisfy(future -> {
            Api.Response waited = future.get();
            assertThat(waited.status()).as(waited.toString()).isEqualTo(202);
            assertThat(waited.header("Preference-Applied")).hasValue("wait=4");
        });
        assertThat(redisRemaining(sale)).isEqualTo(91);
    }
}
