package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * Issue 27, path 7, on the API: a SYNC batch whose COMMIT stalls in Postgres (here a deferred trigger
 * that sleeps at COMMIT, where a stalled disk or a connection that stopped answering would hold it) keeps
 * its purchase for no longer than {@code app.purchase.commit-timeout} plus the look-up that follows (one
 * query timeout): 503 {@code OUTCOME_UNKNOWN} with the order's Location, since the commit may still land;
 * once it lands, a replay of the key gets the order.
 */
@TestPropertySource(properties = "app.purchase.commit-timeout=2s")
class StalledCommitIntegrationTests extends ApiIntegrationTest {

    private static final Duration STALL = Duration.ofSeconds(9); // longer than the 7 s bound below

    @BeforeEach
    void syncMode() {
        closeBreakers();
        api.setMode("SYNC");
    }

    /** Every COMMIT that carries an order of the sale sleeps first, until the returned handle drops it. */
    private AutoCloseable stallCommitsOf(long sale) {
        String name = "test_stall_commit_" + sale;
        jdbc.sql("create function " + name + "() returns trigger language plpgsql as $$ begin perform pg_sleep("
                        + STALL.toSeconds() + "); return null; end $$")
                .update();
        jdbc.sql("create constraint trigger " + name
                        + " after insert on purchase_order deferrable initially deferred for each row when (new.sale_id = "
                        + sale + ") execute function " + name + "()")
                .update();
        // Dropping the trigger waits for a COMMIT still sleeping in it: tried until that one has ended.
        return () -> await().atMost(STALL.plusSeconds(10)).ignoreExceptions().untilAsserted(() -> {
            jdbc.sql("drop trigger if exists " + name + " on purchase_order").update();
            jdbc.sql("drop function if exists " + name + "()").update();
        });
    }

    @Test
    void a_stalled_commit_answers_outcome_unknown_within_its_bound_and_the_replay_gets_the_order_once_it_lands()
            throws Exception {
        long sale = api.createSale(5, 1);
        String user = "stalled-" + sale;
        try (AutoCloseable stalled = stallCommitsOf(sale)) {
            long started = System.nanoTime();
            Api.Response unknown = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
            Duration waited = Duration.ofNanos(System.nanoTime() - started);

            assertThat(waited)
                    .as("the commit timeout (2 s) and the look-up's query timeout (2 s), not the %s stall", STALL)
                    .isLessThan(Duration.ofSeconds(7));
            assertThat(unknown.status()).as(unknown.toString()).isEqualTo(503);
            assertThat(unknown.code()).isEqualTo("OUTCOME_UNKNOWN");
            String orderId = unknown.text("orderId");
            assertThat(unknown.header("Location")).hasValue("/api/v1/orders/" + orderId);

            // "Unknown" was the truth: the COMMIT lands once its trigger wakes, and the key finds the order.
            await().atMost(STALL.plusSeconds(10)).until(() -> pgConfirmedOrders(sale) == 1);
            Api.Response replay = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
            assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
            assertThat(replay.text("orderId")).isEqualTo(orderId);
            assertThat(redisRemaining(sale)).isEqualTo(4);
            assertThat(pgRemaining(sale)).isEqualTo(4);
        }
    }
}
