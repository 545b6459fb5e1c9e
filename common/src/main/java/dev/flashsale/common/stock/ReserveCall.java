package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** One call of the reserve script for orders of one sale: its keys and arguments, and how its answer reads. */
record ReserveCall(long saleId, List<ReserveRequest> requests) {

    /** Slots of the script's answer per order: a kind and three values. */
    private static final int SLOTS = 4;

    List<String> keys() {
        SaleKeys keys = new SaleKeys(saleId);
        return List.of(keys.sale(), keys.users(), keys.pending(), keys.orders(), keys.refusals());
    }

    String[] args(String recordTtlSeconds, String refusalTtlSeconds, String instance) {
        List<String> args = new ArrayList<>(3 + requests.size() * 7);
        args.add(recordTtlSeconds);
        args.add(refusalTtlSeconds);
        args.add(instance);
        for (ReserveRequest request : requests) {
            args.add(request.orderId().toString());
            args.add(request.userId());
            args.add(Integer.toString(request.quantity()));
            args.add(Long.toString(request.now().toEpochMilli()));
            args.add(request.mode().name());
            args.add(request.rememberRefusal() ? "1" : "0");
            args.add(request.state().name());
        }
        return args.toArray(String[]::new);
    }

    List<ReserveResult> results(List<@Nullable Object> answer) {
        if (answer.size() != requests.size() * SLOTS) {
            throw new IllegalStateException(
                    "reserve script answered " + answer.size() + " values for " + requests.size() + " orders");
        }
        List<ReserveResult> results = new ArrayList<>(requests.size());
        for (int at = 0; at < answer.size(); at += SLOTS) {
            results.add(result(
                    answer.subList(at, at + SLOTS).stream().map(String::valueOf).toList()));
        }
        return results;
    }

    private static ReserveResult result(List<String> slots) {
        return switch (slots.getFirst()) {
            case "RESERVED" -> new ReserveResult.Reserved(Long.parseLong(slots.get(1)), Long.parseLong(slots.get(2)));
            case "REFUSED" -> new ReserveResult.Refused(slots.get(1), Long.parseLong(slots.get(2)));
            case "UNAVAILABLE" -> new ReserveResult.Unavailable(slots.get(1));
            case "HELD_BY_OTHERS" -> new ReserveResult.HeldByOthers();
            case "EXISTS" ->
                new ReserveResult.Existing(
                        ReservationState.valueOf(slots.get(1)), PurchasePath.valueOf(slots.get(2)), slots.get(3));
            default -> throw new IllegalStateException("reserve script answered " + slots);
        };
    }
}
