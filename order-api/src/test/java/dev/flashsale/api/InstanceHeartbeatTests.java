package dev.flashsale.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.stock.InstanceLeases;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Decision 0029: an instance that stops beating lapses 5 s later, and the reconciler then settles the
 * reservations its requests hold. At shutdown the web server drains its requests for up to 20 s after the
 * scheduler has stopped (it stops at the context's close event), so the heartbeat must beat on until the
 * drain is over.
 */
class InstanceHeartbeatTests {

    /** Counts beats instead of sending them. */
    static final class CountedLeases extends InstanceLeases {
        final AtomicInteger beats = new AtomicInteger();

        CountedLeases() {
            super(new StringRedisTemplate());
        }

        @Override
        public void beat() {
            beats.incrementAndGet();
        }
    }

    /** The web server's graceful shutdown, draining for a while. */
    static final class Drain implements SmartLifecycle {
        private final CountedLeases leases;
        private volatile boolean running;
        volatile int beatsAtStart;
        volatile int beatsAtEnd;

        Drain(CountedLeases leases) {
            this.leases = leases;
        }

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            beatsAtStart = leases.beats.get();
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            beatsAtEnd = leases.beats.get();
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE;
        }
    }

    @Test
    void beats_on_while_the_web_server_drains_its_requests_at_shutdown_and_stops_after() throws Exception {
        CountedLeases leases = new CountedLeases();
        Drain drain = new Drain(leases);
        GenericApplicationContext context = new GenericApplicationContext();
        context.registerBean(InstanceHeartbeat.class, () -> new InstanceHeartbeat(leases, Duration.ofMillis(100)));
        context.registerBean(Drain.class, () -> drain);
        context.refresh();
        Thread.sleep(300);
        assertThat(leases.beats.get()).as("beats from the start").isPositive();

        context.close();

        assertThat(drain.beatsAtEnd - drain.beatsAtStart)
                .as("beats during a 1 s drain, every 100 ms")
                .isGreaterThanOrEqualTo(5);
        int afterClose = leases.beats.get();
        Thread.sleep(300);
        assertThat(leases.beats.get()).as("no beat once closed").isEqualTo(afterClose);
    }
}
