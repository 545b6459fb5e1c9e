package dev.flashsale.api.warmup;

import dev.flashsale.api.security.SecurityProperties;
import dev.flashsale.api.throttle.ThrottleProperties;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.stereotype.Component;

/**
 * Rehearses the purchase path before the instance reports ready, so that a pod added during a spike (or
 * by the pre-sale scale-out) does not meet the crowd with a cold JVM: first requests to its own port (the
 * web, security and JSON layers, and a sale's line), then the back half on a throw-away sale
 * ({@link Rehearsals}). It runs as an {@link ApplicationRunner}: Spring Boot publishes {@code ReadinessState.ACCEPTING_TRAFFIC} only after
 * every runner has returned, so the readiness probe answers 503 until the warm-up is done, while liveness is
 * already up. Bounded by {@code app.warmup.budget}; a step that fails (a dependency down) ends the
 * warm-up early but never the start-up: readiness is this instance's own state, and the instance answers
 * for a degraded dependency itself.
 */
@Component
@ConditionalOnBooleanProperty("app.warmup.enabled")
class Warmup implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(Warmup.class);

    /**
     * The {@code index}th round of a rehearsal, run by one of the senders (each sender rehearses on an id of
     * its own, at or below the sale's); what it did, in the rehearsal's unit.
     */
    private interface Round {
        int run(int sender, int index) throws InterruptedException;
    }

    /** The {@code i}th of the requests a warm-up step sends; the HTTP statuses of its answers. */
    private interface Exchange {
        List<Integer> statuses(int i) throws InterruptedException;
    }

    /** The line's throw-away sale: below the ids the other rehearsals take (the sale's, and four below it). */
    static final int LINE_SALE_BELOW = 5;

    private final WarmupProperties properties;
    private final Rehearsals rehearsals;
    private final SecurityProperties security;
    private final ThrottleProperties throttle;
    private final ApplicationContext context;
    private final Clock clock;
    private volatile @Nullable WarmupReport report;

    Warmup(
            WarmupProperties properties,
            Rehearsals rehearsals,
            SecurityProperties security,
            ThrottleProperties throttle,
            ApplicationContext context,
            Clock clock) {
        this.properties = properties;
        this.rehearsals = rehearsals;
        this.security = security;
        this.throttle = throttle;
        this.context = context;
        this.clock = clock;
    }

    @Override
    public void run(ApplicationArguments args) {
        Instant started = clock.instant();
        Instant deadline = started.plus(properties.budget());
        long saleId = Rehearsals.throwAwaySaleId();
        String shopperPrefix = Rehearsals.shopperPrefix("warmup");
        log.info(
                "warm-up started (readiness waits for it, at most {}s)",
                properties.budget().toSeconds());
        Map<Integer, Integer> answers = Map.of();
        Map<Integer, Integer> lineAnswers = Map.of();
        int scriptCalls = 0;
        int rolledBack = 0;
        int confirmed = 0;
        String failure = "";
        boolean requested = false;
        try {
            // The back half first, each part within its share of the budget, so a slow one (a loaded node,
            // a slow dependency) cannot leave the others cold; the requests take what is left.
            scriptCalls = repeat(
                    properties.rounds(),
                    (sender, i) -> rehearsals.ledger(saleId - sender, shopperPrefix),
                    share(deadline, 5));
            rolledBack = repeat(
                    properties.rounds(),
                    (sender, i) -> rehearsals.database(saleId - 1 - sender, shopperPrefix) ? 1 : 0,
                    share(deadline, 6));
            confirmed = repeat(
                    properties.rounds(),
                    (sender, i) -> rehearsals.broker(saleId, shopperPrefix) ? 1 : 0,
                    share(deadline, 6));
            WebServer server = context instanceof WebServerApplicationContext web ? web.getWebServer() : null;
            if (server != null) {
                SelfRequests requests = new SelfRequests(server.getPort(), security, clock);
                requested = true;
                answers = tally(i -> List.of(requests.send(i, saleId, shopperPrefix)), deadline);
                lineAnswers = inLine(requests, saleId - LINE_SALE_BELOW, shopperPrefix + "line-", deadline);
            }
        } catch (RuntimeException e) {
            failure = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "interrupted";
        } finally {
            // The made-up shoppers' throttle counters expire with their window: outwait it, leave none behind.
            if (requested) {
                sleepUntil(clock.instant().plus(throttle.window()));
            }
        }
        WarmupReport done = new WarmupReport(
                saleId,
                shopperPrefix,
                answers,
                lineAnswers,
                scriptCalls,
                rolledBack,
                confirmed,
                Duration.between(started, clock.instant()),
                failure);
        report = done;
        // A failed warm-up still lets the instance start (readiness is its own state), so it says so loudly;
        // flashsale.warmup.failed (WarmupOutcome) carries the same to the canary's gate and the alerts.
        log.atLevel(done.failed() ? Level.WARN : Level.INFO)
                .log(
                        "warm-up {} in {} ms: {} requests {}, line answers {}, {} stock script calls, {} order batches"
                                + " rolled back, {} unroutable publishes confirmed{}",
                        done.failed() ? "FAILED" : "done",
                        done.took().toMillis(),
                        done.requests(),
                        answers,
                        lineAnswers,
                        scriptCalls,
                        rolledBack,
                        confirmed,
                        failure.isEmpty() ? "" : "; stopped early: " + failure);
    }

    /**
     * A crowd of {@code app.warmup.requests} shoppers in the line of a throw-away sale that Redis alone knows
     * ({@link Rehearsals#openLine}), each asking again with their place when told to wait; its keys are deleted
     * after. The answers, by HTTP status.
     */
    private Map<Integer, Integer> inLine(SelfRequests requests, long saleId, String shopperPrefix, Instant deadline)
            throws InterruptedException {
        rehearsals.openLine(saleId);
        try {
            return tally(i -> requests.inLine(i, saleId, shopperPrefix), deadline);
        } finally {
            rehearsals.closeLine(saleId);
        }
    }

    /** {@code app.warmup.requests} exchanges over the senders, until the deadline; their answers, by HTTP status. */
    private Map<Integer, Integer> tally(Exchange exchange, Instant deadline) throws InterruptedException {
        Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
        repeat(
                properties.requests(),
                (sender, i) -> {
                    exchange.statuses(i).forEach(status -> statuses.merge(status, 1, Integer::sum));
                    return 1;
                },
                deadline);
        return new TreeMap<>(statuses);
    }

    /** The last warm-up's report, or null before it has finished. */
    @Nullable
    WarmupReport report() {
        return report;
    }

    /** {@code rounds} rounds over {@code app.warmup.concurrency} senders, until the deadline; the rounds' sum. */
    private int repeat(int rounds, Round round, Instant deadline) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        List<Future<Integer>> results = new ArrayList<>();
        try (ExecutorService senders = Executors.newFixedThreadPool(properties.concurrency())) {
            for (int s = 0; s < properties.concurrency(); s++) {
                int sender = s;
                results.add(senders.submit(() -> {
                    int done = 0;
                    for (int i = next.getAndIncrement();
                            i < rounds && clock.instant().isBefore(deadline);
                            i = next.getAndIncrement()) {
                        done += round.run(sender, i);
                    }
                    return done;
                }));
            }
        }
        int done = 0;
        for (Future<Integer> result : results) {
            try {
                done += result.get();
            } catch (ExecutionException e) {
                throw new IllegalStateException("a warm-up round failed: " + e.getCause(), e.getCause());
            }
        }
        return done;
    }

    /** A {@code 1/parts} share of the budget from now, but never past the deadline. */
    private Instant share(Instant deadline, int parts) {
        Instant end = clock.instant().plus(properties.budget().dividedBy(parts));
        return end.isBefore(deadline) ? end : deadline;
    }

    private void sleepUntil(Instant until) {
        Duration left = Duration.between(clock.instant(), until);
        if (left.isPositive()) {
            try {
                Thread.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
