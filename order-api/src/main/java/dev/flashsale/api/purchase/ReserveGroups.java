package dev.flashsale.api.purchase;

import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReserveRequest;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The reserves of concurrent ASYNC purchases (a SYNC batch reserves its own: {@link SyncReserves}), as a group commit ({@code app.purchase.reserve.*}): what queues while
 * reserve calls are under way goes in the next one, one script call per sale with its orders in arrival
 * order ({@link StockLedger#reserveAll}). A Redis round trip per purchase was most of Redis's CPU per order;
 * a group pays one per sale. With no linger nothing waits on purpose: a purchase that finds a round free
 * reserves at once on its own thread, and groups form only while every round is busy
 * (docs/decisions/0022-a-batched-reserve.md).
 */
@Component
class ReserveGroups implements DisposableBean {

    /** An order to reserve, on the path chosen for it. */
    record Ask(OrderRequested order, PurchasePath mode) {

        ReserveRequest request() {
            return new ReserveRequest(
                    order.orderId(),
                    order.userId(),
                    order.quantity(),
                    mode,
                    order.requestedAt(),
                    order.idempotencyKey() != null);
        }
    }

    /** What a reserve call made of an ask: the script's answer, or the failure of its sale's call. */
    sealed interface Answer {
        record Answered(ReserveResult result) implements Answer {}

        record Failed(RuntimeException cause) implements Answer {}
    }

    private final StockLedger ledger;
    private final GroupCommit<Ask, Answer> reserves;

    ReserveGroups(StockLedger ledger, PurchaseProperties properties, MeterRegistry meters) {
        this.ledger = ledger;
        this.reserves = new GroupCommit<>("reserve", properties.reserve(), this::reserveAll, meters);
    }

    /**
     * Reserves the order's units with the others that queue meanwhile, and answers what the script decided
     * for it.
     *
     * @throws RuntimeException when Redis failed its sale's call, its wait ran out ({@link Overdue}) or the
     *     application is shutting down: as a failed reserve call, nothing may be taken for granted
     */
    ReserveResult reserve(OrderRequested order, PurchasePath mode) {
        return switch (reserves.submit(new Ask(order, mode), lingered -> {})) {
            case Answer.Answered answered -> answered.result();
            case Answer.Failed failed -> throw failed.cause();
        };
    }

    /**
     * One script call per sale, each with its asks in arrival order. A call that fails fails only its own
     * sale's asks; nothing is thrown, so another sale's answers stand.
     */
    private List<Answer> reserveAll(List<Ask> asks) {
        Answer[] answers = new Answer[asks.size()];
        List<Integer> arrivals = IntStream.range(0, asks.size()).boxed().toList();
        OrderRequested.bySale(arrivals, at -> asks.get(at).order()).forEach((saleId, ofSale) -> {
            try {
                List<ReserveResult> results = ledger.reserveAll(
                        saleId,
                        ofSale.stream().map(at -> asks.get(at).request()).toList());
                for (int i = 0; i < ofSale.size(); i++) {
                    answers[ofSale.get(i)] = new Answer.Answered(results.get(i));
                }
            } catch (RuntimeException e) {
                ofSale.forEach(at -> answers[at] = new Answer.Failed(e));
            }
        });
        return Arrays.asList(answers);
    }

    @Override
    public void destroy() {
        reserves.close();
    }
}
