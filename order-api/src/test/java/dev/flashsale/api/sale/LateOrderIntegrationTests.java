package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.WorkerProcess;
import dev.flashsale.common.support.PrivateRedis;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Orders accepted before Redis lost their records land in Postgres long after the sale was rebuilt (the
 * worker was down): Redis is then ahead of Postgres, and is caught up however late they land. On a Redis of
 * the test's own (port 6393).
 */
class LateOrderIntegrationTests extends ApiIntegrationTest {

    private static final PrivateRedis REDIS = PrivateRedis.start(6393);
    private static WorkerProcess worker;

    @DynamicPropertySource
    static void privateRedis(DynamicPropertyRegistry registry) {
        rebuildFrom(REDIS, registry);
    }

    @AfterAll
    static void stop() throws Exception {
        if (worker != null) {
            worker.close();
        }
        REDIS.close();
    }

    @Test
    void orders_accepted_before_a_flush_and_written_after_the_rebuild_leave_no_phantom_units() throws Exception {
        assertThat(api.setMode("ASYNC").status()).isEqualTo(200);
        long sale = api.createSale(10, 1);
        // No worker yet: the ten orders wait in the queue.
        List<Api.Response> first = Api.concurrently(10, n -> api.purchase(sale, "late-a-" + sale + "-" + n, 1));
        assertThat(first).allSatisfy(response -> assertThat(response.status()).isEqualTo(202));

        redis.execute((RedisCallback<Void>) connection -> {
            connection.serverCommands().flushAll();
            return null;
        });
        assertThat(api.setMode("ASYNC").status()).isEqualTo(200); // the mode flag was lost too
        // A storefront reads the sale: the read brings it back, from a Postgres that has none of the ten.
        api.get("/api/v1/sales/" + sale, null);
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(redisRemaining(sale)).isEqualTo(10));
        Thread.sleep(3000); // past the window a rebuild used to open for its watch (2 s when this test failed)

        worker = WorkerProcess.start("late-order", Map.of("REDIS_PORT", Integer.toString(REDIS.port())));
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(pgConfirmedOrders(sale)).isEqualTo(10));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            Api.Response view = api.stock(sale);
            assertThat(view.body().path("redisRemaining").asLong())
                    .as("%s", view.body())
                    .isZero();
            assertThat(view.body().path("balanced").asBoolean())
                    .as("%s", view.body())
                    .isTrue();
        });

        List<Api.Response> second = Api.concurrently(10, n -> purchaseAfterHold(sale, "late-b-" + sale + "-" + n));
        assertThat(second).allSatisfy(response -> {
            assertThat(response.status()).isEqualTo(409);
            assertThat(response.code()).isEqualTo("SOLD_OUT");
        });
        assertThat(api.get("/api/v1/sales/" + sale, null).text("state")).isEqualTo("SOLD_OUT");
        assertThat(pgConfirmedOrders(sale)).isEqualTo(10);
        assertThat(jdbc.sql("select count(*) from purchase_order where sale_id = :id")
                        .param("id", sale)
                        .query(Long.class)
                        .single())
                .as("orders in Postgres: no order was taken for a phantom unit")
                .isEqualTo(10);
        assertThat(pgRemaining(sale)).isZero();
        assertThat(redisRemaining(sale)).isZero();
    }

    /**
     * A purchase retried while the sale is frozen after a rebuild, as a client does: after a share of
     * Retry-After, keeping its place in the sale's line.
     */
    private Api.Response purchaseAfterHold(long sale, String user) {
        return api.purchaseInLine(sale, user, 1, 30);
    }
}
