package dev.flashsale.api.purchase;

import dev.flashsale.api.input.Preference;
import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.mode.ModeSetting;
import dev.flashsale.api.mode.ModeSwitch;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * The two paths a purchase can take: which one it takes (the mode flag, the client's preference, the
 * paths' breakers and queues), and the answer the path gives for a reserved order — 201 from SYNC, 202
 * from ASYNC, 503 when it could not take it.
 */
@Component
class PurchasePaths {

    private final ModeSwitch modes;
    private final SyncPurchase sync;
    private final AsyncPurchase async;
    private final AutoPilot autoPilot;
    private final PurchaseCounts counts;
    private final PurchaseProperties properties;
    private final Clock clock;

    PurchasePaths(
            ModeSwitch modes,
            SyncPurchase sync,
            AsyncPurchase async,
            AutoPilot autoPilot,
            PurchaseCounts counts,
            PurchaseProperties properties,
            Clock clock) {
        this.modes = modes;
        this.sync = sync;
        this.async = async;
        this.autoPilot = autoPilot;
        this.counts = counts;
        this.properties = properties;
        this.clock = clock;
    }

    /**
     * Forced SYNC or ASYNC is obeyed (503 when that path's breaker is open or its queue is late); AUTO
     * follows the autopilot and the client's {@code respond-async}, and takes the other path when the
     * chosen one cannot take the purchase now. Nothing is reserved yet: a refusal decided here or in Redis
     * never touches the database or the broker, and an overloaded path refuses in microseconds instead of
     * queueing the request.
     */
    PurchasePath choose(Preference preference) {
        boolean auto = modes.setting() == ModeSetting.AUTO;
        PurchasePath mode = auto && preference.respondAsync() ? PurchasePath.ASYNC : modes.effective();
        if (available(mode)) {
            return mode;
        }
        PurchasePath other = mode == PurchasePath.SYNC ? PurchasePath.ASYNC : PurchasePath.SYNC;
        if (auto && available(other)) {
            counts.diverted(mode, other);
            return other;
        }
        counts.count(mode, "SHED");
        throw unavailable(
                mode == PurchasePath.SYNC
                        ? "The database is saturated or unavailable; nothing was reserved."
                        : "The order queue is saturated or unavailable; nothing was reserved.");
    }

    /** Whether a path takes a purchase now: breaker not open, and its group commit admits more. */
    private boolean available(PurchasePath mode) {
        return mode == PurchasePath.ASYNC ? async.looksAvailable() : sync.hasCapacity();
    }

    /** An order's end on its path: its answer, or why it went no further than Redis. */
    sealed interface PathEnd permits PathEnd.Answered, NotTaken {
        record Answered(PurchaseOutcome outcome) implements PathEnd {}
    }

    /**
     * The order, reserved by its path's batch (unless {@code reserved} already: held back by a batch before) and
     * written (SYNC) or queued (ASYNC). A 503 UNAVAILABLE means nothing was taken (nothing reserved, or the
     * reservation given back); OUTCOME_UNKNOWN means the order may exist. {@code admit}: the reserve counts the
     * attempt and binds its key ({@link BatchReserves.Order}).
     */
    PathEnd take(
            PurchasePath mode,
            OrderRequested order,
            Preference preference,
            long arrived,
            boolean reserved,
            boolean admit) {
        return mode == PurchasePath.SYNC
                ? takeSync(order, arrived, admit)
                : takeAsync(order, preference, arrived, reserved, admit);
    }

    private PathEnd takeSync(OrderRequested order, long arrived, boolean admit) {
        Written written;
        try {
            written = sync.take(order, admit, unavailable("The order could not be written; nothing was taken."));
        } catch (SyncPurchase.OutcomeUnknown unknown) {
            // The key stays bound: its replay finds the order in Postgres, or learns it was not written.
            counts.count(PurchasePath.SYNC, "UNKNOWN");
            throw unknown(order);
        } catch (ApiProblem problem) {
            counts.count(PurchasePath.SYNC, problem.code().code());
            throw problem;
        }
        if (written instanceof NotTaken notTaken) {
            return counted(PurchasePath.SYNC, notTaken);
        }
        counts.count(PurchasePath.SYNC, OrderStatus.CONFIRMED.name());
        autoPilot.answered(PurchasePath.SYNC, System.nanoTime() - arrived);
        return new PathEnd.Answered(
                new PurchaseOutcome(view(order, OrderStatus.CONFIRMED, PurchasePath.SYNC), HttpStatus.CREATED, null));
    }

    private PathEnd takeAsync(
            OrderRequested order, Preference preference, long arrived, boolean reserved, boolean admit) {
        AsyncPurchase.Publication publication;
        switch (async.take(order, reserved, admit)) {
            case NotTaken notTaken -> {
                return counted(PurchasePath.ASYNC, notTaken);
            }
            case AsyncPurchase.Taken.Published published -> publication = published.publication();
        }
        counts.count(PurchasePath.ASYNC, publication.name());
        switch (publication) {
            case ACCEPTED -> {}
            case RELEASED -> throw unavailable("The order could not be queued; nothing was taken.");
            case UNKNOWN -> throw unknown(order);
            case FAILED -> throw closedFailed(order.orderId(), properties.unavailableRetryAfter());
        }
        autoPilot.answered(PurchasePath.ASYNC, System.nanoTime() - arrived);
        return new PathEnd.Answered(new PurchaseOutcome(
                view(order, OrderStatus.QUEUED, PurchasePath.ASYNC),
                HttpStatus.ACCEPTED,
                preference.respondAsync() && modes.setting() == ModeSetting.AUTO ? "respond-async" : null));
    }

    /** A failed reserve call is the path's 503: counted as one; what Redis decided is counted by its answer. */
    private NotTaken counted(PurchasePath mode, NotTaken notTaken) {
        if (notTaken instanceof NotTaken.ReserveFailed) {
            counts.count(mode, ProblemCode.UNAVAILABLE.code());
        }
        return notTaken;
    }

    private OrderView view(OrderRequested order, OrderStatus status, PurchasePath mode) {
        return new OrderView(
                order.orderId(),
                order.saleId(),
                order.quantity(),
                status,
                mode,
                order.requestedAt(),
                clock.instant(),
                null,
                order.userId());
    }

    private ApiProblem unavailable(String detail) {
        return ApiProblem.unavailable(detail, properties.unavailableRetryAfter());
    }

    /**
     * An ASYNC order that ended FAILED (here: closed by the reconciler's hand-off timeout while its publish
     * waited; on a replay, also one a worker failed): it exists and holds nothing. Never 202: 503 with its id
     * and Location, where it reads FAILED; the key stays bound to it.
     */
    static ApiProblem closedFailed(UUID orderId, Duration retryAfter) {
        return ApiProblem.outcomeUnknown(
                orderId, "The order failed; nothing is held for it. Read it at its Location.", retryAfter);
    }

    /** The order may exist or still be made: its id and Location go with the 503, the key stays bound. */
    private ApiProblem unknown(OrderRequested order) {
        return ApiProblem.outcomeUnknown(
                order.orderId(),
                "The order's outcome is not known yet: read the order at its Location, or retry with the same Idempotency-Key.",
                properties.unavailableRetryAfter());
    }
}
