package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.AsyncFaultsIntegrationTest;
import dev.flashsale.api.support.Faults;
import dev.flashsale.api.support.Tokens;
import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.stock.StockLedger;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.test.context.TestPropertySource;

/**
 * An ASYNC order the broker confirmed is accepted: it is never answered 503, whichever store fails after
 * the confirm; and a replay finds an order wherever it is known. No worker runs here, so accepted ASYNC
 * orders stay QUEUED.
 */
// SYNC's request wait of 4 s, not 15: its overdue test sleeps past it. ASYNC's stays: its tests' publishes
// take 6 s and must end inside it.
@TestPropertySource(properties = "app.purchase.sync.max-wait=4s")
class AcceptedOrderIntegrationTests extends AsyncFaultsIntegrationTest {

    /**
     * The conservation check and AUTO's idle probe call the ledger and the store on threads of their own,
     * so faults are switched, not stubbed.
     */
    @TestConfiguration
    static class StoreFaults {

        @Bean
        static Faults faults() {
            return new Faults(StockLedger.class, OrderLookup.class, IdempotencyKeys.class, OrderPublisher.class);
        }
    }

    /**
     * The shopper's keyed purchase, and its replay half a second later while the original still waits for its
     * publish: both are answered 503 OUTCOME_UNKNOWN, and the reservation ends RELEASED ({@code why}) with the
     * unit back in Redis.
     */
    private void originalAndReplayAnswerOutcomeUnknown(long sale, String user, String why) throws Exception {
        CompletableFuture<Api.Response> original =
                CompletableFuture.supplyAsync(() -> api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale));
        Thread.sleep(500);
        Api.Response replay = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        Api.Response first = original.get(30, TimeUnit.SECONDS);

        assertThat(first.status()).as(first.toString()).isEqualTo(503);
        assertThat(replay.status()).as(replay.toString()).isEqualTo(503);
        assertThat(replay.code()).isEqualTo("OUTCOME_UNKNOWN");
        assertThat(reservationState(sale, replay.text("orderId"))).as(why).isEqualTo("RELEASED");
        assertThat(redisRemaining(sale)).isEqualTo(5);
    }

    /** Defect 5: Redis failed right after the broker's confirm, so the record could not become PUBLISHED. */
    @Test
    void a_confirmed_publish_that_redis_could_not_mark_published_answers_202() {
        long sale = api.createSale(5, 1);
        faults.inject(
                StockLedger.class,
                ledger -> ledger.markPublished(0, List.of()),
                new RedisConnectionFailureException("injected: Redis unreachable after the confirm"));

        Api.Response accepted = api.purchase(sale, "confirmed-" + sale, 1, "Idempotency-Key", "k-" + sale);

        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        assertThat(accepted.text("status")).isEqualTo("QUEUED");
        assertThat(reservationState(sale, accepted.text("orderId")))
                .as("still RESERVED: a worker claims it, the reconciler publishes it again past its grace")
                .isEqualTo("RESERVED");
        assertThat(redisRemaining(sale)).isEqualTo(4);

        faults.clear();
        Api.Response replay = api.purchase(sale, "confirmed-" + sale, 1, "Idempotency-Key", "k-" + sale);
        assertThat(replay.status()).as(replay.toString()).isEqualTo(202);
        assertThat(replay.text("orderId")).isEqualTo(accepted.text("orderId"));
        assertThat(reservationState(sale, accepted.text("orderId")))
                .as("the replay published it again and marked it PUBLISHED: nothing can release it any more")
                .isEqualTo("PUBLISHED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
    }

    /** Issue 27, path 1: a replay must not turn a publish still waiting for its confirm into 202. */
    @Test
    void a_replay_of_a_purchase_whose_publish_is_nacked_late_is_not_told_202() throws Exception {
        long sale = api.createSale(5, 1);
        String user = "nacked-late-" + sale;
        faults.inject(OrderPublisher.class, publisher -> publisher.publish(List.of()), call -> {
            Thread.sleep(6_000);
            return OrderPublisher.Outcome.NACKED;
        });

        originalAndReplayAnswerOutcomeUnknown(sale, user, "released by the original: no message carries it");
    }

    /**
     * Issue 38, finding 7: the replay's copy of the order is confirmed but Redis cannot mark it PUBLISHED; the
     * original's publish is then nacked and releases the still RESERVED record, and the worker would drop the
     * copy as RELEASED. A 202 to the replay would name an order that never exists.
     */
    @Test
    void a_replay_whose_copy_is_confirmed_but_not_marked_published_is_not_told_202() throws Exception {
        long sale = api.createSale(5, 1);
        String user = "copy-unmarked-" + sale;
        AtomicInteger publishes = new AtomicInteger();
        faults.inject(OrderPublisher.class, publisher -> publisher.publish(List.of()), call -> {
            if (publishes.getAndIncrement() == 0) { // the original's: nacked after the replay's wait
                Thread.sleep(6_500);
                return OrderPublisher.Outcome.NACKED;
            }
            return call.callRealMethod(); // the replay's copy: confirmed
        });
        faults.inject(
                StockLedger.class,
                ledger -> ledger.markPublished(0, List.of()),
                new RedisConnectionFailureException("injected: Redis unreachable for the PUBLISHED mark"));

        originalAndReplayAnswerOutcomeUnknown(sale, user, "released by the original: the worker drops the copy");
    }

    /** Issue 27, path 6: a release that cannot reach Redis after a timed-out publish does not say "nothing taken". */
    @Test
    void a_timed_out_publish_whose_release_fails_answers_outcome_unknown_with_the_order() {
        long sale = api.createSale(5, 1);
        faults.inject(
                OrderPublisher.class,
                publisher -> publisher.publish(List.of()),
                call -> OrderPublisher.Outcome.TIMED_OUT);
        faults.inject(
                StockLedger.class,
                ledger -> ledger.release(0, null, null, null, null),
                new RedisConnectionFailureException("injected: Redis unreachable for the release"));

        Api.Response unknown = api.purchase(sale, "timed-out-" + sale, 1);

        assertThat(unknown.status()).as(unknown.toString()).isEqualTo(503);
        assertThat(unknown.code()).isEqualTo("OUTCOME_UNKNOWN");
        assertThat(unknown.header("Retry-After")).isPresent();
        String orderId = unknown.text("orderId");
        assertThat(unknown.header("Location")).hasValue("/api/v1/orders/" + orderId);
        assertThat(reservationState(sale, orderId))
                .as("held: a late message may still be written")
                .isEqualTo("RESERVED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
    }

    /**
     * Requests whose wait ran out while a round was reserving them: the round reserves and takes them on after
     * their requests stopped waiting, so each is told its outcome is unknown, with the order's Location. Before:
     * 503 UNAVAILABLE, "nothing was taken", for orders that were then published (ASYNC) or written (SYNC).
     */
    private void overdueWhileTheirRoundReserves(Duration maxWait, int accepted, String taken) throws Exception {
        long sale = api.createSale(5, 1);
        faults.inject(StockLedger.class, ledger -> ledger.reserveAll(0, List.of()), call -> {
            Thread.sleep(maxWait.plusSeconds(1).toMillis());
            return call.callRealMethod();
        });

        // One may run its round on its own thread (and wait for it): the others queue for a committer's round.
        List<Api.Response> answers = Api.concurrently(3, i -> api.purchase(sale, "overdue-" + i + "-" + sale, 1));

        assertThat(answers)
                .allSatisfy(answer -> assertThat(answer.status() == accepted || "OUTCOME_UNKNOWN".equals(answer.code()))
                        .as(answer.toString())
                        .isTrue());
        assertThat(answers).anySatisfy(answer -> assertThat(answer.code()).isEqualTo("OUTCOME_UNKNOWN"));
        faults.clear();
        for (Api.Response answer : answers) {
            await().atMost(Duration.ofSeconds(15))
                    .untilAsserted(() -> assertThat(reservationState(sale, answer.text("orderId")))
                            .as("the order the answer named was taken after all")
                            .isEqualTo(taken));
        }
    }

    @Test
    void async_requests_overdue_while_their_round_reserves_them_answer_outcome_unknown_not_nothing_taken()
            throws Exception {
        overdueWhileTheirRoundReserves(Duration.ofSeconds(8), 202, "PUBLISHED");
    }

    @Test
    void sync_requests_overdue_while_their_round_reserves_them_answer_outcome_unknown_not_nothing_taken()
            throws Exception {
        api.setMode("SYNC");
        overdueWhileTheirRoundReserves(Duration.ofSeconds(4), 201, "CONFIRMED");
    }

    @Test
    void an_accepted_order_reads_queued_from_redis_while_postgres_is_down() {
        long sale = api.createSale(5, 1);
        String user = "patient-" + sale;
        Api.Response accepted = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        faults.inject(
                OrderLookup.class,
                lookup -> lookup.find(null),
                new CannotGetJdbcConnectionException("injected: Postgres down"));

        Api.Response status = api.get("/api/v1/orders/" + accepted.text("orderId"), Tokens.shopper(user));
        Api.Response replay = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        Api.Response waited = api.purchase(sale, "waiter-" + sale, 1, "Prefer", "wait=1");

        assertThat(status.status()).as(status.toString()).isEqualTo(200);
        assertThat(status.text("status")).isEqualTo("QUEUED");
        assertThat(replay.status()).as(replay.toString()).isEqualTo(202);
        assertThat(replay.text("orderId")).isEqualTo(accepted.text("orderId"));
        assertThat(waited.status()).as(waited.toString()).isEqualTo(202);
        assertThat(waited.text("status")).isEqualTo("QUEUED");
    }

    @Test
    void a_replay_while_redis_is_down_finds_the_written_order_in_postgres() {
        api.setMode("SYNC");
        long sale = api.createSale(5, 1);
        String user = "written-" + sale;
        Api.Response confirmed = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        assertThat(confirmed.status()).as(confirmed.toString()).isEqualTo(201);
        // Redis down wherever the key would be bound: by the throttle's own call (Redis Cluster, a sale not looked up
        // yet), or by the batch's reserve call (one master, decision 0030).
        RedisConnectionFailureException down = new RedisConnectionFailureException("injected: Redis down");
        faults.inject(IdempotencyKeys.class, keys -> keys.bind(null, null, 0, 0), down);
        faults.inject(StockLedger.class, ledger -> ledger.reserveAll(0, null), down);

        Api.Response replay = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        Api.Response fresh = api.purchase(sale, "newcomer-" + sale, 1, "Idempotency-Key", "k-" + sale);

        assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
        assertThat(replay.text("orderId")).isEqualTo(confirmed.text("orderId"));
        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(fresh.status()).as("nothing is sold without Redis").isEqualTo(503);
        assertThat(fresh.header("Retry-After")).isPresent();
    }
}
