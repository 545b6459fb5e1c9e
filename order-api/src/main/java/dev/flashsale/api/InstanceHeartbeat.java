package dev.flashsale.api;

import dev.flashsale.common.stock.InstanceLeases;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Renews this instance's lease every {@code app.redis.heartbeat}: once another instance has beaten a lease
 * ({@code app.reconciler.instance-lease}) after this one last did, the reconciler settles the reservations
 * this instance holds at once, as it does after the grace for an instance that ran alone. It beats on its own
 * thread until the web server has finished its requests at shutdown (its phase stops after the graceful
 * shutdown's): the scheduler stops at the first sign of shutdown, and a request still draining then must not
 * lose its reservation to a lapse.
 */
@Component
class InstanceHeartbeat implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(InstanceHeartbeat.class);

    private final InstanceLeases leases;
    private final Duration every;
    private @Nullable ScheduledExecutorService beats;

    InstanceHeartbeat(InstanceLeases leases, @Value("${app.redis.heartbeat}") Duration every) {
        this.leases = leases;
        this.every = every;
    }

    @Override
    public synchronized void start() {
        log.info("API instance {}: the reservations it holds carry its id", leases.instance());
        beats = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("instance-heartbeat").daemon().factory());
        beats.scheduleAtFixedRate(this::beat, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void beat() {
        try {
            leases.beat();
        } catch (RuntimeException e) { // Redis unreachable: nothing can be reserved either; the next beat renews
            log.debug("instance lease not renewed: {}", e.toString());
        }
    }

    @Override
    public synchronized void stop() {
        if (beats != null) {
            beats.shutdownNow();
            beats = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return beats != null;
    }

    /** Stops after the web server's graceful shutdown, which stops first (the higher phase). */
    @Override
    public int getPhase() {
        return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1;
    }
}
