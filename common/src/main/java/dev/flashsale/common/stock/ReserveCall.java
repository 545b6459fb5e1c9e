package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** One call of the reserve script for orders of one sale: its keys and arguments, and how its answer reads. */
record ReserveCall(long saleId, List<ReserveRequest> requests) {

    /** Slots of the script's answer per order: a kind and three values. */
    private static final int SLOTS = 4;

    /** Arguments per order (reserve.lua's ARGV). */
    private static final int PER_ORDER = 13;

    /** The sale's keys, KEYS[1..5]. */
    private static final int SALE_KEYS = 5;

    /** An order's admission arguments when its call does not admit it (counted before). */
    private static final List<String> NOT_ADMITTED = List.of("0", "", "", "0", "", "");

    /** The sale's keys, then those of each admission in the orders' order: its counter, and its binding's. */
    List<String> keys() {
        SaleKeys sale = new SaleKeys(saleId);
        List<String> keys = new ArrayList<>(SALE_KEYS + 2 * requests.size());
        keys.addAll(List.of(sale.sale(), sale.users(), sale.pending(), sale.orders(), sale.refusals()));
        for (ReserveRequest request : requests) {
            ReserveRequest.Admission admission = request.admission();
            if (admission != null) {
                keys.add(admission.counterKey());
                if (admission.bindingKey() != null) {
                    keys.add(admission.bindingKey());
                }
            }
        }
        return keys;
    }

    String[] args(String recordTtlSeconds, String refusalTtlSeconds, String instance) {
        List<String> args = new ArrayList<>(3 + requests.size() * PER_ORDER);
        args.add(recordTtlSeconds);
        args.add(refusalTtlSeconds);
        args.add(instance);
        int key = SALE_KEYS; // the last key given so far, counted from 1 as Lua does
        for (ReserveRequest request : requests) {
            args.add(request.orderId().toString());
            args.add(request.userId());
            args.add(Integer.toString(request.quantity()));
            args.add(Long.toString(request.now().toEpochMilli()));
            args.add(request.mode().name());
            args.add(request.rememberRefusal() ? "1" : "0");
            args.add(request.state().name());
            ReserveRequest.Admission admission = request.admission();
            if (admission == null) {
                args.addAll(NOT_ADMITTED);
                continue;
            }
            args.add(Integer.toString(++key));
            args.add(Long.toString(admission.windowMillis()));
            args.add(Integer.toString(admission.limit()));
            args.add(admission.bindingKey() == null ? "0" : Integer.toString(++key));
            args.add(admission.binding() == null ? "" : admission.binding());
            args.add(Long.toString(admission.bindingTtlMillis()));
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
            case "THROTTLED" -> new ReserveResult.Throttled(Long.parseLong(slots.get(1)));
            case "BOUND" -> new ReserveResult.Bound(slots.get(1));
            case "EXISTS" ->
                new ReserveResult.Existing(
                        ReservationState.valueOf(slots.get(1)), PurchasePath.valueOf(slots.get(2)), slots.get(3));
            default -> throw new IllegalStateException("reserve script answered " + slots);
        };
    }
}
