package dev.flashsale.api.purchase;

import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveRequest;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.stereotype.Component;

/**
 * The reserves of a path's batch, made by the batch itself before it writes (SYNC) or publishes (ASYNC): one
 * reserve script call per sale, its orders in queue order (docs/decisions/0024-batches-reserve-their-orders.md).
 * The batch's linger, which every purchase waits anyway, groups the reserves too: at 700/s about seven orders
 * share one Redis round trip instead of taking one each.
 */
@Component
class BatchReserves {

    private static final Logger log = LoggerFactory.getLogger(BatchReserves.class);

    private final StockLedger ledger;
    private final KnownRefusals known;
    private final IdempotencyKeys keys;

    BatchReserves(StockLedger ledger, KnownRefusals known, IdempotencyKeys keys) {
        this.ledger = ledger;
        this.known = known;
        this.keys = keys;
    }

    /**
     * An order of a path's batch. {@code admit}: its request has not counted its attempt nor bound its
     * Idempotency-Key (the purchase throttle's call), and its reserve call does, on one Redis master.
     */
    record Order(OrderRequested requested, boolean admit) {}

    /**
     * What Redis decided for each order of a path's batch, by position in the batch, and the sales whose
     * call failed without an answer.
     *
     * @param results null where its sale's call failed, which may or may not have run
     * @param unanswered the sales whose call got no answer (a timeout, a connection lost with the call in
     *     flight): it may have reserved its orders. Not those Redis refused with an error, nor those never
     *     sent (no connection): those reserved nothing (the scripts write last, and Redis refuses a script's
     *     first write or none).
     */
    record Reserves(List<@Nullable ReserveResult> results, Set<Long> unanswered) {}

    /**
     * What Redis decided for each order of {@code mode}'s batch, recorded as {@code state} when reserved (an
     * order id given twice is decided twice: the second finds the first's record). A reservation's remaining
     * units teach the sold-out memory, as every reserve does.
     */
    Reserves reserve(List<Order> batch, PurchasePath mode, ReservationState state) {
        @Nullable ReserveResult[] results = new ReserveResult[batch.size()];
        Set<Long> unanswered = new HashSet<>();
        List<Integer> positions = IntStream.range(0, batch.size()).boxed().toList();
        OrderRequested.bySale(positions, at -> batch.get(at).requested()).forEach((saleId, ofSale) -> {
            List<ReserveRequest> requests = new ArrayList<>(ofSale.size());
            ofSale.forEach(at -> requests.add(request(batch.get(at), mode, state)));
            List<ReserveResult> decided;
            try {
                decided = ledger.reserveAll(saleId, requests);
            } catch (RuntimeException e) {
                log.debug("reserve of {} {} orders of sale {} failed: {}", ofSale.size(), mode, saleId, e.toString());
                if (!refusedOrUnsent(e)) {
                    unanswered.add(saleId);
                }
                return;
            }
            for (int i = 0; i < ofSale.size(); i++) {
                results[ofSale.get(i)] = decided.get(i);
                if (decided.get(i) instanceof ReserveResult.Reserved reserved) {
                    known.reserved(saleId, reserved.remaining());
                }
            }
        });
        return new Reserves(Arrays.asList(results), unanswered);
    }

    /** Redis answered the call with an error, or the call never left: nothing of it ran. */
    static boolean refusedOrUnsent(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisCommandExecutionException
                    || cause instanceof RedisConnectionException
                    || cause instanceof RedisConnectionFailureException) {
                return true;
            }
        }
        return false;
    }

    private ReserveRequest request(Order ask, PurchasePath mode, ReservationState state) {
        OrderRequested order = ask.requested();
        return new ReserveRequest(
                order.orderId(),
                order.userId(),
                order.quantity(),
                mode,
                order.requestedAt(),
                order.idempotencyKey() != null,
                state,
                ask.admit() ? keys.admission(order) : null);
    }
}
