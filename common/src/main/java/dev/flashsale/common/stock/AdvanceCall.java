package dev.flashsale.common.stock;

import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * One call of the advance script: its keys and arguments, and how its answer reads. {@code datesAnew}: the
 * moved records are scored anew in the pending set, so that their age counts from now (a claim always is).
 */
record AdvanceCall(
        long saleId, List<UUID> orderIds, Set<ReservationState> from, ReservationState to, boolean datesAnew) {

    AdvanceCall(long saleId, List<UUID> orderIds, Set<ReservationState> from, ReservationState to) {
        this(saleId, orderIds, from, to, to == ReservationState.CLAIMED);
    }

    List<String> keys() {
        SaleKeys keys = new SaleKeys(saleId);
        return List.of(keys.sale(), keys.pending(), keys.orders());
    }

    String[] args() {
        String[] args = new String[orderIds.size() + 3];
        args[0] = ReservationState.csv(from);
        args[1] = to.name();
        args[2] = to == ReservationState.CONFIRMED ? "ends" : datesAnew ? "dates" : "keeps";
        for (int i = 0; i < orderIds.size(); i++) {
            args[i + 3] = orderIds.get(i).toString();
        }
        return args;
    }

    List<Transition> transitions(List<String> results) {
        if (results.size() != orderIds.size()) {
            throw new IllegalStateException(
                    "advance script answered " + results.size() + " results for " + orderIds.size() + " orders");
        }
        return results.stream().map(AdvanceCall::advanced).toList();
    }

    /** One entry of the script's answer: {@code CHANGED:STATE}, {@code UNCHANGED:STATE} or {@code MISSING}. */
    private static Transition advanced(String result) {
        int colon = result.indexOf(':');
        if (colon < 0) {
            return new Transition(false, null);
        }
        return new Transition(result.startsWith("CHANGED"), ReservationState.valueOf(result.substring(colon + 1)));
    }
}
