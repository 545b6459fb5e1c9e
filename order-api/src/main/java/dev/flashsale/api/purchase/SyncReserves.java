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
 * The reserves of a SYNC batch, made by the batch that writes it to Postgres next: one reserve script call per
 * sale, its orders in queue order, each recorded straight as WRITING (docs/decisions/0024-sync-reserves-in-the-write-batch.md).
 * The batch's linger, which a SYNC purchase waits anyway, groups the reserves too: at 700/s about seven orders
 * share one Redis round trip instead of taking one each, and no second call moves them RESERVED → WRITING.
 */
@Component
class SyncReserves {

    private static final Logger log = LoggerFactory.getLogger(SyncReserves.class);

    private final StockLedger ledger;
    private final KnownRefusals known;

    SyncReserves(StockLedger ledger, KnownRefusals known) {
        this.ledger = ledger;
        this.known = known;
    }

    /**
     * What Redis decided for each order, by position in the batch (an order id given twice is decided twice:
     * the second finds the first's record); null where its sale's call failed, which may or may not have run.
     * A reservation's remaining units teach the sold-out memory, as every reserve does.
     */
    List<@Nullable ReserveResult> reserve(List<OrderRequested> batch) {
        @Nullable ReserveResult[] results = new ReserveResult[batch.size()];
        List<Integer> positions = IntStream.range(0, batch.size()).boxed().toList();
        OrderRequested.bySale(positions, at -> batch.get(at)).forEach((saleId, ofSale) -> {
            List<ReserveRequest> requests = new ArrayList<>(ofSale.size());
            ofSale.forEach(at -> requests.add(writing(batch.get(at))));
            List<ReserveResult> decided;
            try {
                decided = ledger.reserveAll(saleId, requests);
            } catch (RuntimeException e) {
                log.debug("reserve of {} sync orders of sale {} failed: {}", ofSale.size(), saleId, e.toString());
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

    private static ReserveRequest writing(OrderRequested order) {
        return new ReserveRequest(
                order.orderId(),
                order.userId(),
                order.quantity(),
                PurchasePath.SYNC,
                order.requestedAt(),
                order.idempotencyKey() != null,
                ReservationState.WRITING);
    }
}
