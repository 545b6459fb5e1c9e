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
            Duration.ofMinutes(1),
            Duration.ofSeconds(5),
            Duration.ofSeconds(1));

    /** The queues have stood empty for the quiet bound: no message can still write an order. */
    private static final boolean QUIET = true;

    private static Settlement of(ReservationState state, PurchasePath mode, Duration age) {
        return Settlement.of(state, mode, age, Duration.ofHours(1), QUIET, false, BOUNDS);
    }

    @Test
    void waits_for_every_reservation_younger_than_its_bound() {
        for (PurchasePath mode : PurchasePath.values()) {
            assertThat(of(ReservationState.RESERVED, mode, Duration.ofSeconds(59)))
                    .as(mode.name())
                    .isEqualTo(Settlement.WAIT);
        }
        assertThat(of(ReservationState.WRITING, PurchasePath.SYNC, Duration.ofSeconds(59)))
                .isEqualTo(Settlement.WAIT);
        for (ReservationState state : new ReservationState[] {ReservationState.PUBLISHED, ReservationState.CLAIMED}) {
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

    /** Its request died with its instance: settled at once, at any age, as past the grace. */
    @Test
    void settles_a_reservation_its_lapsed_instance_held_at_once() {
        Duration young = Duration.ZERO;
        assertThat(Settlement.of(
                        ReservationState.WRITING, PurchasePath.SYNC, young, Duration.ZERO, QUIET, true, BOUNDS))
                .isEqualTo(Settlement.PROBE_THEN_RELEASE);
        assertThat(Settlement.of(
                        ReservationState.RESERVED, PurchasePath.SYNC, young, Duration.ZERO, QUIET, true, BOUNDS))
                .isEqualTo(Settlement.RELEASE);
        assertThat(Settlement.of(
                        ReservationState.RESERVED, PurchasePath.ASYNC, young, Duration.ZERO, QUIET, true, BOUNDS))
                .isEqualTo(Settlement.PUBLISH);
        // No request holds a published or claimed one: its message may still be written, lapsed API or not.
        for (ReservationState state : new ReservationState[] {ReservationState.PUBLISHED, ReservationState.CLAIMED}) {
            assertThat(Settlement.of(state, PurchasePath.ASYNC, young, Duration.ofHours(1), QUIET, true, BOUNDS))
                    .as(state.name())
                    .isEqualTo(Settlement.WAIT);
        }
        assertThat(Settlement.of(
                        ReservationState.WRITING, PurchasePath.SYNC, young, Duration.ZERO, QUIET, false, BOUNDS))
                .isEqualTo(Settlement.WAIT);
    }

    /**
     * Its request is over, and no answer said the order does not exist: it is published for a worker, at any
     * age past the grace, whatever the queues hold and however long this worker has consumed.
     */
    @Test
    void publishes_an_async_order_its_request_left_reserved_past_the_grace() {
        for (Duration age : new Duration[] {Duration.ofSeconds(60), Duration.ofMinutes(5), Duration.ofDays(6)}) {
            for (boolean quiet : new boolean[] {true, false}) {
                assertThat(Settlement.of(
                                ReservationState.RESERVED,
                                PurchasePath.ASYNC,
                                age,
                                Duration.ZERO,
                                quiet,
                                false,
                                BOUNDS))
                        .as(age + (quiet ? ", quiet" : ", a queue holds messages"))
                        .isEqualTo(Settlement.PUBLISH);
            }
        }
    }

    /** A replay's fresh reservation its API could not give back: never published, closed like one never published. */
    @Test
    void closes_a_reservation_not_to_be_published_only_after_the_handoff_timeout_once_the_queues_are_quiet() {
        assertThat(Settlement.unpublished(Duration.ofMinutes(5).minusMillis(1), QUIET, BOUNDS))
                .isEqualTo(Settlement.WAIT);
        assertThat(Settlement.unpublished(Duration.ofMinutes(5), QUIET, BOUNDS)).isEqualTo(Settlement.FAIL);
        assertThat(Settlement.unpublished(Duration.ofDays(6), false, BOUNDS)).isEqualTo(Settlement.FOLLOW);
    }

    @Test
    void closes_a_claimed_order_unfinished_only_after_the_handoff_timeout() {
        assertThat(of(
                        ReservationState.CLAIMED,
                        PurchasePath.ASYNC,
                        Duration.ofMinutes(5).minusMillis(1)))
                .isEqualTo(Settlement.WAIT);
        assertThat(of(ReservationState.CLAIMED, PurchasePath.ASYNC, Duration.ofMinutes(5)))
                .isEqualTo(Settlement.FAIL);
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
                        false,
                        BOUNDS))
                .isEqualTo(Settlement.FOLLOW);
        assertThat(Settlement.of(
                        ReservationState.CLAIMED,
                        PurchasePath.ASYNC,
                        Duration.ofHours(1),
                        Duration.ofMinutes(5),
                        QUIET,
                        false,
                        BOUNDS))
                .isEqualTo(Settlement.FAIL);
    }

    @Test
    void never_closes_an_order_whose_message_a_queue_may_hold_but_follows_postgres() {
        // A deep backlog, a retry copy whose PUBLISHED mark failed.
        for (ReservationState state : new ReservationState[] {ReservationState.PUBLISHED, ReservationState.CLAIMED}) {
            assertThat(Settlement.of(
                            state, PurchasePath.ASYNC, Duration.ofDays(6), Duration.ofHours(1), false, false, BOUNDS))
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
