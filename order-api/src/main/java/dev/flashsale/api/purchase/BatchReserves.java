package dev.flashsale.api.purchase;

import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReservationState;
import dev.flashsale.common.stock.ReserveRequest;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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

    BatchReserves(StockLedger ledger, KnownRefusals known) {
        this.ledger = ledger;
        this.known = known;
    }

    /**
     * What Redis decided for each order of {@code mode}'s batch, recorded as {@code state} when reserved, by
     * position in the batch (an order id given twice is decided twice: the second finds the first's record);
     * null where its sale's call failed, which may or may not have run. A reservation's remaining units teach
     * the sold-out memory, as every reserve does.
     */
    List<@Nullable ReserveResult> reserve(List<OrderRequested> batch, PurchasePath mode, ReservationState state) {
        @Nullable ReserveResult[] results = new ReserveResult[batch.size()];
        List<Integer> positions = IntStream.range(0, batch.size()).boxed().toList();
        OrderRequested.bySale(positions, at -> batch.get(at)).forEach((saleId, ofSale) -> {
            List<ReserveRequest> requests = new ArrayList<>(ofSale.size());
            ofSale.forEach(at -> requests.add(request(batch.get(at), mode, state)));
            List<ReserveResult> decided;
            try {
                decided = ledger.reserveAll(saleId, requests);
            } catch (RuntimeException e) {
                log.debug("reserve of {} {} orders of sale {} failed: {}", ofSale.size(), mode, saleId, e.toString());
                return;
            }
            for (int i = 0; i < ofSale.size(); i++) {
                results[ofSale.get(i)] = decided.get(i);
                if (decided.get(i) instanceof ReserveResult.Reserved reserved) {
                    known.reserved(saleId, reserved.remaining());
                }
            }
        });
        return Arrays.asList(results);
    }

    private static ReserveRequest request(OrderRequested order, PurchasePath mode, ReservationState state) {
        return new ReserveRequest(
                order.orderId(),
                order.userId(),
                order.quantity(),
                mode,
                order.requestedAt(),
                order.idempotencyKey() != null,
                state);
    }
}
