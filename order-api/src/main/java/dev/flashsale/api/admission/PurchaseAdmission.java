package dev.flashsale.api.admission;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.flashsale.api.input.Preference;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import dev.flashsale.api.refusal.KnownRefusals;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.Optional;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import tools.jackson.databind.json.JsonMapper;

/**
 * The door of the purchase endpoint: at most {@code limit} purchases are in progress in this instance;
 * the next one is refused at once with 503, code UNAVAILABLE and Retry-After, before the token is checked
 * or anything is reserved. It runs ahead of everything else, because under overload the queue that grows
 * is not one the purchase paths can see: requests wait for CPU (virtual threads queue for carriers), and
 * each one in progress holds memory. The paths' own admission (group commit) still sheds a late database
 * or broker; this bounds the rest, so a crowd beyond capacity meets fast refusals, not seconds of waiting.
 *
 * <p>The limit adapts to a standing queue ({@link StandingQueueLimit}): a burst gets in whole as long as
 * most purchases complete within the target, and a crowd the instance cannot serve in time meets a limit
 * sized by Little's law. {@code Prefer: wait} purchases wait on purpose: their latency is not sampled, and
 * once taken they give their place up while they wait for the order ({@link DoorPlace}).
 * A full door lets purchases of a sale with few units left wait in line, in arrival order
 * ({@link WaitingLine}); purchases this instance refuses from memory pass it (see {@link KnownRefusals}).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1)
class PurchaseAdmission extends OncePerRequestFilter {

    private static final String PURCHASES = "/api/v1/sales/";
    private static final String ORDERS = "/orders";

    private final boolean enabled;
    private final SimpleLimiter<Void> limiter;
    private final byte[] refusal;
    private final String retryAfter;
    private final CpuShedding cpu;
    private final KnownRefusals known;
    private final WaitingLineProperties lineProperties;
    private final WaitingLine line;
    private final Counter refusedAtLimit;
    private final Counter lineTimedOut;
    private final Counter refusedForCpu;

    PurchaseAdmission(
            AdmissionProperties properties,
            CpuShedding cpu,
            KnownRefusals known,
            WaitingLineProperties lineProperties,
            JsonMapper json,
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
        this.refusal = json.writeValueAsBytes(Problems.of(
                ProblemCode.UNAVAILABLE,
                "The API is at capacity; nothing was reserved. Retry after the time in Retry-After."));
        this.retryAfter = Problems.seconds(properties.retryAfter());
        this.refusedAtLimit = refusedCounter("limit", meters);
        this.refusedForCpu = refusedCounter("cpu", meters);
        this.lineTimedOut = refusedCounter("line", meters);
        meters.gauge("flashsale.admission.waiting", line, WaitingLine::size);
        meters.gauge("flashsale.admission.limit", limiter, SimpleLimiter::getLimit);
        meters.gauge("flashsale.admission.inflight", limiter, SimpleLimiter::getInflight);
    }

    private static Counter refusedCounter(String reason, MeterRegistry meters) {
        return Counter.builder("flashsale.admission.refused")
                .description(
                        "Purchases refused at the door: at the concurrency limit, after waiting in line, or shed while the CPU was saturated")
                .tag("reason", reason)
                .register(meters);
    }

    static Limit limit(AdmissionProperties properties) {
        return switch (properties.algorithm()) {
            case FIXED -> FixedLimit.of(properties.maxLimit());
            case STANDING_QUEUE ->
                new StandingQueueLimit(
                        properties.target().toNanos(),
                        properties.interval().toNanos(),
                        Math.min(properties.minLimit(), properties.maxLimit()),
                        properties.maxLimit());
        };
    }

    /**
     * Not a purchase, or a purchase of a sale this instance refuses from memory ({@link KnownRefusals}): a
     * refusal that costs what a ping costs is neither shed nor counted as load.
     */
    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String uri = request.getRequestURI();
        return !enabled
                || !"POST".equals(request.getMethod())
                || !uri.startsWith(PURCHASES)
                || !uri.endsWith(ORDERS)
                || refusedFromMemory(uri);
    }

    private boolean refusedFromMemory(String uri) {
        long saleId = saleOf(uri);
        return saleId >= 0 && known.refusesEveryone(saleId);
    }

    /**
     * At most as many purchases wait as the sale has units left: one behind them would get a unit only if
     * one of them failed, and is told 503 at once instead (when it retries, the sale has sold out or not).
     * That bounds the line, its memory and its wait to what the sale can sell.
     */
    private long lineCapacity(long saleId) {
        long left = known.unitsLeft(saleId);
        return left < 0 ? lineProperties.maxWaiting() : Math.max(1, left);
    }

    /** The sale id of a purchase's path, or -1. */
    private static long saleOf(String uri) {
        try {
            return Long.parseLong(uri, PURCHASES.length(), uri.length() - ORDERS.length(), 10);
        } catch (NumberFormatException | IndexOutOfBoundsException notASale) {
            return -1;
        }
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!cpu.admits()) {
            refusedForCpu.increment();
            refuse(response);
            return;
        }
        long saleId = saleOf(request.getRequestURI());
        boolean mayWait = mayWait(saleId);
        // Nobody passes the line: while purchases wait in it, a newcomer who may wait joins it.
        Optional<Limiter.Listener> admitted = mayWait && !line.isEmpty() ? Optional.empty() : limiter.acquire(null);
        if (admitted.isEmpty()) {
            Optional<WaitingLine.Turn> turn = mayWait
                    ? line.await(lineCapacity(saleId), () -> limiter.acquire(null), () -> known.refusesEveryone(saleId))
                    : Optional.empty();
            switch (turn.orElse(null)) {
                case WaitingLine.Turn.Admitted place -> admitted = Optional.of(place.listener());
                case WaitingLine.Turn.Refused fromMemory -> {
                    chain.doFilter(request, response); // refused from memory: no place, no load
                    return;
                }
                case WaitingLine.Turn.TimedOut waitedTooLong -> {
                    lineTimedOut.increment();
                    refuse(response);
                    return;
                }
                case null -> {
                    refusedAtLimit.increment();
                    refuse(response);
                    return;
                }
            }
        }
        DoorPlace place = DoorPlace.take(request, admitted.get(), line);
        boolean done = false;
        try {
            chain.doFilter(request, response);
            done = true;
        } finally {
            if (!done || waitsOnPurpose(request)) {
                place.end(Limiter.Listener::onIgnore);
            } else if (response.getStatus() >= 500) {
                place.end(Limiter.Listener::onDropped);
            } else {
                place.end(Limiter.Listener::onSuccess);
            }
        }
    }

    /**
     * A purchase may wait at a full door for a sale with few units left: in a flash sale the line is
     * served in arrival order and ends within about a second, when the sale sells out. A sale with stock
     * for hours would keep a line of the whole overload: those purchases are refused at once. A sale this
     * instance has not looked up yet may be a flash sale whose doors just opened: its first burst waits too.
     */
    private boolean mayWait(long saleId) {
        return lineProperties.enabled() && saleId >= 0 && known.unitsLeft(saleId) <= lineProperties.maxUnits();
    }

    private void refuse(HttpServletResponse response) throws IOException {
        response.setStatus(HttpStatus.SERVICE_UNAVAILABLE.value());
        response.setHeader(HttpHeaders.RETRY_AFTER, retryAfter);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setContentLength(refusal.length);
        response.getOutputStream().write(refusal);
    }

    private static boolean waitsOnPurpose(HttpServletRequest request) {
        return Preference.parse(Collections.list(request.getHeaders("Prefer"))).waitFor() != null;
    }
}
