package dev.flashsale.api;

import dev.flashsale.common.stock.InstanceLeases;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Renews this instance's lease every {@code app.redis.heartbeat}: once another instance has beaten a lease
 * ({@code app.reconciler.instance-lease}) after this one last did, the reconciler settles the reservations
 * this instance holds at once, as it does after the grace for an instance that ran alone.
 */
@Component
class InstanceHeartbeat {

    private static final Logger log = LoggerFactory.getLogger(InstanceHeartbeat.class);

    private final InstanceLeases leases;

    InstanceHeartbeat(InstanceLeases leases) {
        this.leases = leases;
        log.info("API instance {}: the reservations it holds carry its id", leases.instance());
    }

    @Scheduled(fixedRateString = "${app.redis.heartbeat}")
    void beat() {
        try {
            leases.beat();
        } catch (RuntimeException e) { // Redis unreachable: nothing can be reserved either; the next beat renews
            log.debug("instance lease not renewed: {}", e.toString());
        }
    }
}
