package dev.flashsale.api.door;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.flashsale.api.refusal.KnownRefusals;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.Optional;
import org.springframework.stereotype.Component;

/**
 * The door of the purchase endpoint: at most {@code limit} purchases are in progress in this instance.
 * The limit adapts to a standing queue ({@link MedianLimit}): a burst gets in whole as long as most
 * purchases complete within the target, and a crowd the instance cannot serve in time meets a limit sized
 * by Little's law. Under overload the queue that grows is not one the purchase paths can see: requests
 * wait for CPU (virtual threads queue for carriers), and each one in progress holds memory. Each path's
 * own limit (its group commit's standing queue) still sheds a late database or broker; this bounds the rest.
 *
 * <p>Purchases of a sale with few units are served through its line ({@link SaleLine}). The places it serves
 * meet a fixed limit of their own ({@code app.door.line.max-in-flight}), and wait in arrival order when it is
 * full ({@link WaitingLine}), for a bounded time. Other purchases meet
 * the door in {@link DoorFilter}, ahead of everything else, and a full door refuses them at once.
 */
@Component
public class Door {

    private final boolean enabled;
    private final SimpleLimiter<Void> limiter;
    private final SimpleLimiter<Void> served;
    private final CpuShedding cpu;
    private final KnownRefusals known;
    private final WaitingLineProperties lineProperties;
    private final WaitingLine line;
    private final Duration retryAfter;
    private final Counter refusedAtLimit;
    private final Counter lineTimedOut;
    private final Counter refusedForCpu;

    Door(
            DoorProperties properties,
            CpuShedding cpu,
            KnownRefusals known,
            WaitingLineProperties lineProperties,
            MeterRegistry meters) {
        this.enabled = properties.enabled();
        this.cpu = cpu;
        this.known = known;
        this.lineProperties = lineProperties;
        this.line = new WaitingLine(lineProperties.maxWait().toNanos(), lineProperties.maxWaiting());
        this.limiter = SimpleLimiter.newBuilder()
                .named("purchases")
                .limit(limit(properties))
                .build();
        this.served = SimpleLimiter.newBuilder()
                .named("served-places")
                .limit(FixedLimit.of(lineProperties.maxInFlight()))
                .build();
        this.retryAfter = properties.retryAfter();
        this.refusedAtLimit = refusedCounter("limit", meters);
        this.refusedForCpu = refusedCounter("cpu", meters);
        this.lineTimedOut = refusedCounter("line", meters);
        meters.gauge("flashsale.door.waiting", line, WaitingLine::size);
        meters.gauge("flashsale.door.limit", limiter, SimpleLimiter::getLimit);
        meters.gauge("flashsale.door.inflight", limiter, SimpleLimiter::getInflight);
        meters.gauge("flashsale.door.line.inflight", served, SimpleLimiter::getInflight);
    }

    private static Counter refusedCounter(String reason, MeterRegistry meters) {
        return Counter.builder("flashsale.door.refused")
                .description(
                        "Purchases refused at the door: at the concurrency limit, after waiting in line, or shed while the CPU was saturated")
                .tag("reason", reason)
                .register(meters);
    }

    static Limit limit(DoorProperties properties) {
        return switch (properties.algorithm()) {
            case FIXED -> FixedLimit.of(properties.maxLimit());
            case STANDING_QUEUE ->
                new MedianLimit(
                        properties.target().toNanos(),
                        properties.interval().toNanos(),
                        Math.min(properties.minLimit(), properties.maxLimit()),
                        properties.maxLimit());
        };
    }

    boolean enabled() {
        return enabled;
    }

    /** Retry-After on a purchase the door refused. */
    Duration retryAfter() {
        return retryAfter;
    }

    /**
     * Whether the sale's purchases are served through its line: a sale with at most {@code max-units} left
     * (a flash sale, whose line ends when it sells out), or one this instance has not looked up yet (a
     * flash sale's doors may just have opened). A sale with stock for hours would keep a line of the whole
     * overload: its purchases meet the door as they come, and a full door refuses them.
     */
    public boolean servesInLine(long saleId) {
        return enabled
                && lineProperties.enabled()
                && saleId >= 0
                && known.unitsLeft(saleId) <= lineProperties.maxUnits();
    }

    /**
     * A place at the door for this request's purchase, as it comes, given up when the request ends (see
     * {@link DoorFilter}); empty when it was refused: the door full, or the CPU saturated.
     */
    Optional<DoorPlace> enter(HttpServletRequest request) {
        return enter(request, -1, false);
    }

    /**
     * A place at the door for a purchase whose place in its sale's line is served ({@link SaleLine}): a full
     * door lets it wait in arrival order, for a bounded time. Empty when it was refused: the wait ran out,
     * the sale sold out meanwhile, or the CPU is saturated.
     */
    Optional<DoorPlace> enterInTurn(HttpServletRequest request, long saleId) {
        return enter(request, saleId, true);
    }

    private Optional<DoorPlace> enter(HttpServletRequest request, long saleId, boolean mayWait) {
        if (!cpu.admits()) {
            refusedForCpu.increment();
            return Optional.empty();
        }
        // A place the line serves meets a fixed limit, not the adaptive one: at most the units left get that
        // far, and each will be sold. In a crowd the box is saturated by the line's answers, so every purchase
        // is late and the adaptive limit sits at its floor, which only made the served places wait at the
        // door and slowed the sell-out (1.9-3.6 s against 0.9-2.0 s, SYNC, S = 1,000, issue 37).
        SimpleLimiter<Void> door = mayWait ? served : limiter;
        // Nobody passes the line: while purchases wait in it, a newcomer who may wait joins it.
        Optional<Limiter.Listener> admitted = mayWait && !line.isEmpty() ? Optional.empty() : door.acquire(null);
        if (admitted.isEmpty() && mayWait) {
            switch (line.await(lineCapacity(saleId), () -> door.acquire(null), () -> known.refusesEveryone(saleId))
                    .orElse(null)) {
                case WaitingLine.Turn.Admitted place -> admitted = Optional.of(place.listener());
                case WaitingLine.Turn.TimedOut waitedTooLong -> lineTimedOut.increment();
                case WaitingLine.Turn.Refused soldOut -> {
                    // answered from memory by the caller: nothing counted
                }
                case null -> refusedAtLimit.increment();
            }
        } else if (admitted.isEmpty()) {
            refusedAtLimit.increment();
        }
        return admitted.map(listener -> DoorPlace.take(request, listener, line));
    }

    /**
     * At most as many purchases wait as the sale has units left: one behind them would get a unit only if
     * one of them failed, and is refused at once instead. That bounds the wait, its memory and its length
     * to what the sale can sell.
     */
    private long lineCapacity(long saleId) {
        long left = known.unitsLeft(saleId);
        return left < 0 ? lineProperties.maxWaiting() : Math.max(1, left);
    }
}
