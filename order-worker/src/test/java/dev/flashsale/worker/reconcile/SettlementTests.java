package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SettlementTests {

    private static final ReconcilerProperties BOUNDS = new ReconcilerProperties(
            Duration.ofSeconds(60),
            Duration.ofMinutes(5),
            Duration.ofSeconds(10),
            500,
            Duration.ofDays(1),
            Duration.ofMinutes(1),
            Duration.ofMinutes(1));

    /** The queues have stood empty for the quiet bound: no message can still write an order. */
    private static final boolean QUIET = true;

    private static Settlement of(ReservationState state, PurchasePath mode, Duration age) {
        return Settlement.of(state, mode, age, Duration.ofHours(1), QUIET, BOUNDS);
    }

    @Test
    void waits_for_every_reservation_younger_than_its_bound() {
        assertThat(of(ReservationState.RESERVED, PurchasePath.SYNC, Duration.ofSeconds(59)))
                .isEqualTo(Settlement.WAIT);
        assertThat(of(ReservationState.WRITING, PurchasePath.SYNC, Duration.ofSeconds(59)))
                .isEqualTo(Settlement.WAIT);
        for (ReservationState state :
                new ReservationState[] {ReservationState.RESERVED, ReservationState.PUBLISHED, ReservationState.CLAIMED
                }) {
            assertThat(of(state, PurchasePath.ASYNC, Duration.ofSeconds(299))).isEqualTo(Settlement.WAIT);
        }
    }

    @Test
    void releases_a_sync_reservation_past_the_grace_and_probes_a_sync_write_first() {
        assertThat(of(ReservationState.RESERVED, PurchasePath.SYNC, Duration.ofSeconds(60)))
                .isEqualTo(Settlement.RELEASE);
        assertThat(of(ReservationState.WRITING, PurchasePath.SYNC, Duration.ofSeconds(60)))
                .isEqualTo(Settlement.PROBE_THEN_RELEASE);
    }

    @Test
    void closes_an_async_order_never_published_or_claimed_and_unfinished_only_after_the_handoff_timeout() {
        assertThat(of(ReservationState.RESERVED, PurchasePath.ASYNC, Duration.ofSeconds(61)))
                .isEqualTo(Settlement.WAIT);
        for (ReservationState state : new ReservationState[] {ReservationState.RESERVED, ReservationState.CLAIMED}) {
            assertThat(of(state, PurchasePath.ASYNC, Duration.ofMinutes(5))).isEqualTo(Settlement.FAIL);
        }
    }

    @Test
    void a_worker_that_has_not_consumed_for_a_handoff_timeout_leaves_claims_alone() {
        // Its predecessor may have died holding the claim: the message is back in the queue, to be claimed again.
        assertThat(Settlement.of(
                        ReservationState.CLAIMED,
                        PurchasePath.ASYNC,
                        Duration.ofHours(1),
                        Duration.ofMinutes(5).minusMillis(1),
                        QUIET,
                        BOUNDS))
                .isEqualTo(Settlement.FOLLOW);
        assertThat(Settlement.of(
                        ReservationState.CLAIMED,
                        PurchasePath.ASYNC,
                        Duration.ofHours(1),
                        Duration.ofMinutes(5),
                        QUIET,
                        BOUNDS))
                .isEqualTo(Settlement.FAIL);
        assertThat(Settlement.of(
                        ReservationState.RESERVED,
                        PurchasePath.ASYNC,
                        Duration.ofHours(1),
                        Duration.ZERO,
                        QUIET,
                        BOUNDS))
                .as("never published: no message can come back")
                .isEqualTo(Settlement.FAIL);
    }

    @Test
    void never_closes_an_order_whose_message_a_queue_may_hold_but_follows_postgres() {
        // A deep backlog, a record left RESERVED after its confirm, a retry copy whose PUBLISHED mark failed.
        for (ReservationState state :
                new ReservationState[] {ReservationState.RESERVED, ReservationState.PUBLISHED, ReservationState.CLAIMED
                }) {
            assertThat(Settlement.of(state, PurchasePath.ASYNC, Duration.ofDays(6), Duration.ofHours(1), false, BOUNDS))
                    .as(state.name())
                    .isEqualTo(Settlement.FOLLOW);
        }
    }

    @Test
    void closes_a_published_order_once_no_queue_holds_its_message() {
        // A claim Redis refused (out of memory) until the retries ran out: the message is dead-lettered.
        assertThat(of(ReservationState.PUBLISHED, PurchasePath.ASYNC, Duration.ofMinutes(5)))
                .isEqualTo(Settlement.FAIL);
        assertThat(of(
                        ReservationState.PUBLISHED,
                        PurchasePath.ASYNC,
                        Duration.ofMinutes(5).minusMillis(1)))
                .isEqualTo(Settlement.WAIT);
    }

    @Test
    void leaves_final_states_alone() {
        for (ReservationState state : new ReservationState[] {
            ReservationState.CONFIRMED, ReservationState.REJECTED, ReservationState.FAILED, ReservationState.RELEASED
        }) {
            assertThat(of(state, PurchasePath.ASYNC, Duration.ofHours(1))).isEqualTo(Settlement.WAIT);
        }
    }
}
