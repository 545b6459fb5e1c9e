package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Measures both paths' round trips alike: every {@code rehearsal-interval} each path's back half is
 * rehearsed without a shopper ({@link PathRehearsal}: SYNC's batch write rolled back, ASYNC's publish to no
 * queue with its confirm), off the sampler's thread, one at a time per path, whichever path carries the
 * crowd. So AUTO's model never compares a loaded path with an idle one, and no shopper is sent down a path
 * to measure it. A rehearsal that fails (the dependency down) is not recorded: the breakers speak for a
 * failing path.
 */
@Component
class PathRehearsals {

    private static final Logger log = LoggerFactory.getLogger(PathRehearsals.class);

    private final ModelAutoPilot pilot;
    private final PathRehearsal rehearsal;
    private final long intervalNanos;
    private final Map<PurchasePath, AtomicBoolean> running = new EnumMap<>(PurchasePath.class);
    /** When each path was last rehearsed (System.nanoTime): a failed attempt, too, waits an interval. */
    private final Map<PurchasePath, Long> attempted = new EnumMap<>(PurchasePath.class);

    PathRehearsals(ModelAutoPilot pilot, PathRehearsal rehearsal, AutoModeProperties limits) {
        this.pilot = pilot;
        this.rehearsal = rehearsal;
        this.intervalNanos = limits.rehearsalInterval().toNanos();
        long now = System.nanoTime();
        for (PurchasePath path : PurchasePath.values()) {
            running.put(path, new AtomicBoolean());
            attempted.put(path, now - intervalNanos);
        }
    }

    @Scheduled(fixedDelayString = "${app.mode.auto.sample-interval:200ms}")
    void rehearseQuietPaths() {
        long now = System.nanoTime();
        for (PurchasePath path : PurchasePath.values()) {
            if (pilot.rehearsalDue(path)
                    && now - attempted.get(path) >= intervalNanos
                    && running.get(path).compareAndSet(false, true)) {
                attempted.put(path, now);
                Thread.ofVirtual().name("auto-rehearsal-" + path).start(() -> rehearse(path));
            }
        }
    }

    private void rehearse(PurchasePath path) {
        try {
            long started = System.nanoTime();
            boolean done = path == PurchasePath.SYNC ? rehearsal.sync() : rehearsal.async();
            if (done) {
                pilot.rehearsed(path, System.nanoTime() - started);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.debug("rehearsal of {} failed: {}", path, e.toString());
        } finally {
            running.get(path).set(false);
        }
    }
}
