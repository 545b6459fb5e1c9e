package dev.flashsale.api.purchase;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.mode.ModeSetting;
import dev.flashsale.api.mode.ModeSwitch;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.api.sale.Sale;
import dev.flashsale.api.sale.SaleCatalogue;
import dev.flashsale.api.sale.SaleRebuild;
import dev.flashsale.api.status.OrderTracker;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.api.throttle.PurchaseThrottle;
import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.stock.Reservation;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;

/**
 * Takes a purchase: picks the path (mode flag, client preference, breakers), binds the Idempotency-Key,
 * reserves in Redis — the only place stock is decided during a sale — and hands the order to the
 * SYNC or ASYNC path. Whatever fails after the reservation gives it back before answering 503.
 */
@Service
class Purchases {

    private final SaleCatalogue sales;
    private final SaleRebuild rebuilds;
    private final StockLedger ledger;
    private final PurchaseThrottle throttle;
    private final IdempotencyKeys idempotencyKeys;
    private final ModeSwitch modes;
    private final AutoPilot autoPilot;
    private final SyncPurchase sync;
    private final AsyncPurchase async;
    private final OrderTracker tracker;
    private final Replays replays;
    private final KnownRefusals known;
    private final PurchaseProperties properties;
    private final MeterRegistry meters;
    private final Clock clock;

    Purchases(
            SaleCatalogue sales,
            SaleRebuild rebuilds,
            StockLedger ledger,
            PurchaseThrottle throttle,
            IdempotencyKeys idempotencyKeys,
            ModeSwitch modes,
            AutoPilot autoPilot,
            SyncPurchase sync,
            AsyncPurchase async,
            OrderTracker tracker,
            Replays replays,
            KnownRefusals known,
            PurchaseProperties properties,
            MeterRegistry meters,
            Clock clock) {
        this.sales = sales;
        this.rebuilds = rebuilds;
        this.ledger = ledger;
        this.throttle = throttle;
        this.idempotencyKeys = idempotencyKeys;
        this.modes = modes;
        this.autoPilot = autoPilot;
        this.sync = sync;
        this.async = async;
        this.tracker = tracker;
        this.replays = replays;
        this.known = known;
        this.properties = properties;
        this.meters = meters;
        this.clock = clock;
    }

    /**
     * The throttle counts every attempt first (a refusal known from memory was answered before: see
     * {@link KnownRefusals}), even one for a sale that does not exist (an unknown sale is not cached:
     * looking it up asks Postgres); an Idempotency-Key is bound in the same round trip.
     */
    PurchaseOutcome purchase(
            long saleId, String userId, int quantity, @Nullable String idempotencyKey, Preference preference) {
        long arrived = System.nanoTime();
        IdempotencyKeys.Binding binding = null;
        boolean redisDown = false;
        if (idempotencyKey == null) {
            throttle.admit(userId);
        } else {
            try {
                binding = idempotencyKeys.bind(userId, idempotencyKey, saleId, quantity);
            } catch (ApiProblem refusedOrReused) {
                throw refusedOrReused;
            } catch (RuntimeException e) {
                redisDown = true;
            }
        }
        // After the throttle: an attempt it refused (429) is no part of the crowd the paths carry.
        autoPilot.arrived();
        return purchase(saleId, userId, quantity, idempotencyKey, preference, binding, redisDown, arrived, true);
    }

    /** The purchase once counted and bound; {@code mayRebind}: a key whose order was given back may make a new one. */
    private PurchaseOutcome purchase(
            long saleId,
            String userId,
            int quantity,
            @Nullable String idempotencyKey,
            Preference preference,
            IdempotencyKeys.@Nullable Binding binding,
            boolean redisDown,
            long arrived,
            boolean mayRebind) {
        UUID orderId = OrderIds.next();
        String fingerprint = null;
        boolean freshKey = false;
        Sale sale;
        if (binding == null) {
            sale = checked(saleId, quantity);
            if (redisDown) {
                return replays.withoutRedis(userId, Objects.requireNonNull(idempotencyKey), saleId, quantity);
            }
        } else {
            orderId = binding.orderId();
            fingerprint = binding.fingerprint();
            freshKey = !binding.replay();
            try {
                sale = checked(saleId, quantity);
            } catch (ApiProblem invalid) {
                if (freshKey) { // bound with the attempt's count, before the sale was looked at: unbind
                    forget(userId, idempotencyKey);
                }
                throw invalid;
            }
            Optional<Reservation> original = binding.replay() ? ledger.find(saleId, orderId) : Optional.empty();
            if (original.isPresent()) {
                // A replay is answered from the original, whatever the paths' state is now.
                Reservation found = original.get();
                count(found.mode(), "REPLAY");
                Replays.Answer answer = replays.answer(
                        asked(saleId, userId, quantity, Objects.requireNonNull(idempotencyKey), binding),
                        found.state(),
                        found.mode(),
                        found.code());
                return answered(
                        answer,
                        saleId,
                        userId,
                        quantity,
                        Objects.requireNonNull(idempotencyKey),
                        preference,
                        binding,
                        arrived,
                        mayRebind);
            }
        }
        PurchaseMode mode = route(preference);
        Instant now = clock.instant();
        OrderRequested order = new OrderRequested(orderId, saleId, userId, quantity, now, idempotencyKey, fingerprint);
        ReserveResult reserved;
        try {
            reserved = ledger.reserve(saleId, orderId, userId, quantity, mode, now, idempotencyKey != null);
        } catch (RuntimeException e) {
            throw unavailable("Stock cannot be checked right now; nothing was reserved.");
        }
        return switch (reserved) {
            case ReserveResult.Reserved r -> {
                known.reserved(saleId, r.remaining());
                yield take(mode, order, preference, arrived);
            }
            case ReserveResult.Refused refused -> {
                if (KnownRefusals.SOLD_OUT.equals(refused.code())) {
                    known.refusedSoldOut(saleId, quantity);
                }
                count(mode, refused.code());
                throw refusal(refused.code());
            }
            case ReserveResult.Unavailable lost -> {
                if (freshKey) {
                    // Nothing was reserved: the key is free again, and the rebuild may bind it to an order
                    // Postgres already holds under it (an answer lost with Redis).
                    forget(order);
                }
                if (lost.missing()) {
                    if (!now.isBefore(sale.endsAt())) {
                        // Ended: there is nothing to rebuild and nothing to wait for.
                        count(mode, "SALE_NOT_ACTIVE");
                        throw refusal("SALE_NOT_ACTIVE");
                    }
                    rebuilds.request(saleId, "a purchase found its Redis state missing");
                }
                count(mode, SaleRebuild.REBUILDING);
                throw new ApiProblem(
                        HttpStatus.SERVICE_UNAVAILABLE,
                        SaleRebuild.REBUILDING,
                        "The sale's stock is being rebuilt; nothing was reserved. Retry shortly.",
                        rebuilds.properties().retryAfter());
            }
            case ReserveResult.Existing existing -> {
                count(existing.mode(), "REPLAY");
                Replays.Answer answer = replays.answer(order, existing.state(), existing.mode(), existing.code());
                yield answered(
                        answer,
                        saleId,
                        userId,
                        quantity,
                        Objects.requireNonNull(idempotencyKey),
                        preference,
                        Objects.requireNonNull(binding),
                        arrived,
                        mayRebind);
            }
        };
    }

    /** The original order a replay asks about: its id, and the key and fingerprint it was bound with. */
    private OrderRequested asked(
            long saleId, String userId, int quantity, String idempotencyKey, IdempotencyKeys.Binding binding) {
        return new OrderRequested(
                binding.orderId(), saleId, userId, quantity, clock.instant(), idempotencyKey, binding.fingerprint());
    }

    /**
     * A replay's answer; when its original was given back (no order exists under the key), the key is bound
     * to a fresh order and the purchase is taken as new, once: a replay is never told to retry for ever.
     */
    private PurchaseOutcome answered(
            Replays.Answer answer,
            long saleId,
            String userId,
            int quantity,
            String idempotencyKey,
            Preference preference,
            IdempotencyKeys.Binding released,
            long arrived,
            boolean mayRebind) {
        return switch (answer) {
            case Replays.Answer.Given given -> given.outcome();
            case Replays.Answer.Released gone -> {
                if (!mayRebind) { // given back twice within one request: another replay races this one
                    throw unavailable("The purchase did not complete; nothing was taken. Retry with the same key.");
                }
                IdempotencyKeys.Binding fresh;
                try {
                    fresh = idempotencyKeys.rebind(userId, idempotencyKey, released);
                } catch (ApiProblem reused) {
                    throw reused;
                } catch (RuntimeException e) {
                    throw unavailable("Stock cannot be checked right now; nothing was reserved.");
                }
                yield purchase(saleId, userId, quantity, idempotencyKey, preference, fresh, false, arrived, false);
            }
        };
    }

    /** The sale (404 if unknown), once the quantity is within its per-user limit (else 400). */
    private Sale checked(long saleId, int quantity) {
        Sale sale = sales.get(saleId);
        if (quantity > sale.perUserLimit()) {
            throw new ApiProblem(
                    HttpStatus.BAD_REQUEST,
                    "VALIDATION_FAILED",
                    "quantity must be at most the sale's per-user limit of " + sale.perUserLimit() + ".");
        }
        return sale;
    }

    /**
     * Forced SYNC or ASYNC is obeyed (503 when that path's breaker is open or its queue is late); AUTO
     * follows the autopilot and the client's {@code respond-async}, and takes the other path when the
     * chosen one cannot take the purchase now. Nothing is reserved yet: a refusal decided here or in Redis
     * never touches the database or the broker, and an overloaded path refuses in microseconds instead of
     * queueing the request.
     */
    private PurchaseMode route(Preference preference) {
        ModeSetting setting = modes.setting();
        boolean auto = setting == ModeSetting.AUTO;
        PurchaseMode mode = auto && preference.respondAsync() ? PurchaseMode.ASYNC : modes.effective();
        if (available(mode)) {
            return mode;
        }
        PurchaseMode other = mode == PurchaseMode.SYNC ? PurchaseMode.ASYNC : PurchaseMode.SYNC;
        if (auto && available(other)) {
            meters.counter("flashsale.purchase.diverted", "from", mode.name(), "to", other.name())
                    .increment();
            return other;
        }
        count(mode, "SHED");
        throw unavailable(
                mode == PurchaseMode.SYNC
                        ? "The database is saturated or unavailable; nothing was reserved."
                        : "The order queue is saturated or unavailable; nothing was reserved.");
    }

    /** Whether a path takes a purchase now: breaker not open, and its group commit admits more. */
    private boolean available(PurchaseMode mode) {
        return mode == PurchaseMode.ASYNC ? async.looksAvailable() : sync.hasCapacity();
    }

    private PurchaseOutcome take(PurchaseMode mode, OrderRequested order, Preference preference, long arrived) {
        if (mode == PurchaseMode.SYNC) {
            OrderStatus status;
            try {
                status = sync.take(order, unavailable("The order could not be written; nothing was taken."));
            } catch (SyncPurchase.OutcomeUnknown unknown) {
                // The key stays bound: its replay finds the order in Postgres, or learns it was not written.
                count(PurchaseMode.SYNC, "UNKNOWN");
                throw unknown(order);
            } catch (ApiProblem problem) {
                forgetIfDead(order, problem);
                count(PurchaseMode.SYNC, problem.code());
                throw problem;
            }
            count(PurchaseMode.SYNC, status.name());
            autoPilot.answered(PurchaseMode.SYNC, System.nanoTime() - arrived);
            return new PurchaseOutcome(view(order, status, PurchaseMode.SYNC), HttpStatus.CREATED, null);
        }
        AsyncPurchase.Handoff handoff = async.take(order);
        count(PurchaseMode.ASYNC, handoff.name());
        switch (handoff) {
            case ACCEPTED -> {}
            case RELEASED -> {
                forget(order);
                throw unavailable("The order could not be queued; nothing was taken.");
            }
            case UNKNOWN -> throw unknown(order);
        }
        autoPilot.answered(PurchaseMode.ASYNC, System.nanoTime() - arrived);
        PurchaseOutcome accepted = new PurchaseOutcome(
                view(order, OrderStatus.QUEUED, PurchaseMode.ASYNC),
                HttpStatus.ACCEPTED,
                preference.respondAsync() && modes.setting() == ModeSetting.AUTO ? "respond-async" : null);
        return accepted;
    }

    /**
     * {@code Prefer: wait=N} on an accepted order: wait up to N seconds (capped) for the worker; 201 if it
     * confirmed. Its caller has given up the purchase's place at the door first: this only waits.
     */
    PurchaseOutcome awaitFinal(PurchaseOutcome accepted, Duration wait) {
        OrderView order = accepted.order();
        Duration capped = wait.compareTo(properties.maxPreferWait()) > 0 ? properties.maxPreferWait() : wait;
        String applied = "wait=" + capped.toSeconds();
        Instant deadline = clock.instant().plus(capped);
        do {
            Optional<OrderView> current;
            try {
                current = tracker.find(order.saleId(), order.orderId());
            } catch (RuntimeException e) { // neither store answers now: the order was accepted all the same
                return accepted.applying(applied);
            }
            if (current.isPresent() && current.get().status().isFinal()) {
                HttpStatus status =
                        current.get().status() == OrderStatus.CONFIRMED ? HttpStatus.CREATED : HttpStatus.ACCEPTED;
                return new PurchaseOutcome(current.get(), status, applied);
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        } while (clock.instant().isBefore(deadline));
        return accepted.applying(applied);
    }

    private void forgetIfDead(OrderRequested order, ApiProblem problem) {
        if (problem.status() == HttpStatus.SERVICE_UNAVAILABLE) {
            forget(order);
        }
    }

    private void forget(OrderRequested order) {
        if (order.idempotencyKey() != null) {
            forget(order.userId(), order.idempotencyKey());
        }
    }

    private void forget(String userId, String idempotencyKey) {
        try {
            idempotencyKeys.forget(userId, idempotencyKey);
        } catch (RuntimeException e) {
            // The key then stays bound to a released order: its next replay binds it to a new one.
        }
    }

    private OrderView view(OrderRequested order, OrderStatus status, PurchaseMode mode) {
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

    /** The order may exist or still be made: its id and Location go with the 503, the key stays bound. */
    private ApiProblem unknown(OrderRequested order) {
        return ApiProblem.outcomeUnknown(
                order.orderId(),
                "The order's outcome is not known yet: read the order at its Location, or retry with the same Idempotency-Key.",
                properties.unavailableRetryAfter());
    }

    static ApiProblem refusal(String code) {
        return switch (code) {
            case "SOLD_OUT" -> new ApiProblem(HttpStatus.CONFLICT, code, "The sale is sold out.");
            case "PURCHASE_LIMIT_REACHED" ->
                new ApiProblem(HttpStatus.CONFLICT, code, "This purchase would exceed your limit for the sale.");
            case "SALE_NOT_ACTIVE" -> new ApiProblem(HttpStatus.CONFLICT, code, "The sale is not open.");
            default -> new ApiProblem(HttpStatus.CONFLICT, code, "The purchase was refused.");
        };
    }

    private void count(PurchaseMode mode, String outcome) {
        meters.counter("flashsale.purchases", "mode", mode.name(), "outcome", outcome)
                .increment();
    }
}
