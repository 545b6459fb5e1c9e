package dev.flashsale.api.refusal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.flashsale.api.problem.ApiProblem;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class KnownRefusalsTests {

    private static final long SALE = 42;
    private static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final FixedReadings redis = new FixedReadings();
    private final KnownRefusals memory = redis.memory(Clock.fixed(NOW, ZoneOffset.UTC), meters);

    private void openSale(int perUserLimit) {
        memory.know(SALE, NOW.minusSeconds(60), NOW.plusSeconds(3600), perUserLimit, 10);
    }

    private @Nullable String code(String user, int quantity, boolean keyed) {
        ApiProblem refusal = memory.refusal(SALE, user, quantity, keyed);
        return refusal == null ? null : refusal.code().code();
    }

    private double counted(String code) {
        return meters.get("flashsale.refusals.known")
                .tag("code", code)
                .counter()
                .count();
    }

    @Test
    void a_sale_it_has_never_seen_is_decided_by_redis() {
        assertThat(code("a", 1, false)).isNull();
        assertThat(memory.refusesEveryone(SALE)).isFalse();
    }

    @Test
    void a_sale_that_has_not_opened_refuses_everyone_from_memory() {
        memory.know(SALE, NOW.plusSeconds(10), NOW.plusSeconds(3600), 1, 10);

        assertThat(code("a", 1, false)).isEqualTo("SALE_NOT_ACTIVE");
        assertThat(code("b", 1, true)).isEqualTo("SALE_NOT_ACTIVE");
        assertThat(memory.refusesEveryone(SALE)).isTrue();
        assertThat(counted("SALE_NOT_ACTIVE")).isEqualTo(2);
    }

    @Test
    void an_ended_sale_refuses_from_memory_only_purchases_that_cannot_be_replays() {
        memory.know(SALE, NOW.minusSeconds(3600), NOW.minusSeconds(1), 1, 10);

        assertThat(code("a", 1, false)).isEqualTo("SALE_NOT_ACTIVE");
        assertThat(code("a", 1, true))
                .as("a keyed purchase may replay an order")
                .isNull();
    }

    @Test
    void the_last_unit_reserved_makes_every_unkeyed_purchase_a_refusal_from_memory_once_it_is_no_longer_held() {
        openSale(1);
        memory.reserved(SALE, 0);

        // The unit just reserved is held and may come back: the held units are read at once, off the
        // purchase path, and here none are held any more.
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(code("late", 1, false)).isEqualTo("SOLD_OUT"));
        assertThat(memory.refusesEveryone(SALE)).isTrue();
        assertThat(counted("SOLD_OUT")).isEqualTo(1);
    }

    @Test
    void nothing_is_refused_sold_out_from_memory_while_held_units_may_come_back() {
        openSale(1);
        redis.set(0L, 1, null, Set.of("winner"));
        memory.reserved(SALE, 0);
        memory.refreshAll();

        assertThat(code("a", 1, false))
                .as("SOLD_OUT is final: one unit is still held")
                .isNull();
        assertThat(memory.refusesEveryone(SALE)).isFalse();

        redis.set(0L, 0, null, Set.of("winner"));
        memory.refreshAll();

        assertThat(code("a", 1, false)).isEqualTo("SOLD_OUT");
    }

    @Test
    void a_reservation_that_leaves_enough_for_any_purchase_teaches_nothing() {
        openSale(2);
        memory.reserved(SALE, 2);

        assertThat(code("a", 2, false)).isNull();
        assertThat(memory.refusesEveryone(SALE)).isFalse();
    }

    @Test
    void a_sold_out_refusal_of_two_units_refuses_two_and_lets_one_ask_redis() {
        openSale(2);
        redis.set(1L, null, Set.of());
        memory.refusedSoldOut(SALE, 2);

        assertThat(code("a", 2, false)).isEqualTo("SOLD_OUT");
        assertThat(code("a", 1, false)).isNull();
        assertThat(memory.refusesEveryone(SALE)).as("one unit may be left").isFalse();
    }

    @Test
    void keyed_purchases_are_refused_from_memory_once_the_shoppers_with_orders_are_read() {
        openSale(1);
        redis.set(0L, null, Set.of("winner"));
        memory.reserved(SALE, 0);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(code("stranger", 1, false)).isEqualTo("SOLD_OUT"));

        // Who holds orders is read at once, off the purchase path, not at the next (hourly) refresh.
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(code("stranger", 1, true)).isEqualTo("SOLD_OUT"));
        assertThat(code("winner", 1, true))
                .as("maybe a replay: it must get its order")
                .isNull();
        assertThat(code("winner", 1, false)).isEqualTo("SOLD_OUT");
    }

    @Test
    void keyed_purchases_ask_redis_while_the_shoppers_with_orders_cannot_be_read() {
        openSale(1);
        redis.fail();
        memory.refusedSoldOut(SALE, 1);

        assertThat(code("stranger", 1, true)).isNull();
    }

    @Test
    void units_that_come_back_are_unlearnt_at_the_next_refresh() {
        openSale(1);
        redis.set(0L, null, Set.of("winner"));
        memory.reserved(SALE, 0);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(code("a", 1, false)).isEqualTo("SOLD_OUT"));

        redis.set(1L, null, Set.of("winner"));
        memory.refreshAll();

        assertThat(code("a", 1, false)).isNull();
        assertThat(memory.refusesEveryone(SALE)).isFalse();
    }

    @Test
    void a_belief_redis_cannot_confirm_is_dropped() {
        openSale(1);
        redis.set(0L, null, Set.of());
        memory.reserved(SALE, 0);
        redis.fail();

        memory.refreshAll();

        assertThat(code("a", 1, false)).isNull();
    }

    @Test
    void a_sale_held_for_a_rebuild_or_lost_from_redis_is_decided_by_redis() {
        openSale(1);
        redis.set(0L, NOW.plusSeconds(3).toEpochMilli(), Set.of());
        memory.reserved(SALE, 0);
        memory.refreshAll();
        assertThat(code("a", 1, false)).as("held").isNull();

        redis.set(null, null, Set.of());
        memory.reserved(SALE, 0);
        memory.refreshAll();
        assertThat(code("a", 1, false)).as("lost").isNull();
    }

    @Test
    void switched_off_it_refuses_nothing_but_still_knows_the_units_left() {
        KnownRefusals off = new KnownRefusals(
                redis,
                new KnownRefusalProperties(false, Duration.ofHours(1), 1000),
                Clock.fixed(NOW, ZoneOffset.UTC),
                meters);
        off.know(SALE, NOW.plusSeconds(10), NOW.plusSeconds(3600), 1, 10);
        off.reserved(SALE, 0);

        assertThat(off.refusal(SALE, "a", 1, false)).isNull();
        assertThat(off.refusesEveryone(SALE)).isFalse();
        assertThat(off.unitsLeft(SALE)).isZero();
        off.destroy();
    }

    @Test
    void a_belief_that_decides_nothing_for_10_s_is_dropped_and_read_no_more() {
        MovingClock clock = new MovingClock(NOW);
        KnownRefusals idle = redis.memory(clock, meters);
        idle.know(SALE, NOW.minusSeconds(60), NOW.plusSeconds(3600), 1, 10);
        idle.reserved(SALE, 0);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertThat(idle.refusal(SALE, "a", 1, false)).isNotNull());

        clock.advance(Duration.ofSeconds(11));
        idle.refreshAll();
        int reads = redis.reads();
        idle.refreshAll();

        assertThat(idle.refusesEveryone(SALE)).isFalse();
        assertThat(redis.reads()).isEqualTo(reads);
        idle.destroy();
    }

    /** A clock a test moves. */
    private static final class MovingClock extends Clock {
        private volatile Instant now;

        MovingClock(Instant now) {
            this.now = now;
        }

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void a_quantity_above_the_limit_is_left_to_the_full_check() {
        openSale(1);
        memory.reserved(SALE, 0);

        assertThat(code("a", 5, false)).isNull();
    }
}
