package dev.flashsale.worker.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.stock.PendingReservations.Pending;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class PublishedWaitsTests {

    private static final UUID ORDER = UUID.randomUUID();

    private static Pending scored(long since) {
        return new Pending(ORDER, Duration.ofMinutes(10), since);
    }

    @Test
    void skips_a_record_read_as_published_while_its_score_stays() {
        PublishedWaits waits = new PublishedWaits(Duration.ofHours(1));
        assertThat(waits.stillWaiting(scored(1_000))).isFalse();

        waits.waiting(scored(1_000));

        assertThat(waits.stillWaiting(scored(1_000))).isTrue();
        waits.forgetStale();
        assertThat(waits.stillWaiting(scored(1_000))).isTrue();
    }

    @Test
    void reads_it_again_once_a_claim_moved_its_score() {
        PublishedWaits waits = new PublishedWaits(Duration.ofHours(1));
        waits.waiting(scored(1_000));

        assertThat(waits.stillWaiting(scored(2_000))).isFalse();
    }

    @Test
    void reads_it_again_once_the_recheck_is_due() throws InterruptedException {
        PublishedWaits waits = new PublishedWaits(Duration.ofMillis(20));
        waits.waiting(scored(1_000));

        Thread.sleep(31); // past 1.5 x the recheck, the latest it may be due

        assertThat(waits.stillWaiting(scored(1_000))).isFalse();
        waits.forgetStale();
        waits.waiting(scored(3_000));
        assertThat(waits.stillWaiting(scored(1_000))).isFalse();
    }
}
