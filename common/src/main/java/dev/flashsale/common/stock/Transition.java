package dev.flashsale.common.stock;

import org.jspecify.annotations.Nullable;

/**
 * Result of a release or advance script: whether the record moved, and the state it was in (before the
 * move when it changed, as it is when it did not; null when the record does not exist).
 */
public record Transition(boolean changed, @Nullable ReservationState state) {

    public boolean missing() {
        return state == null;
    }
}
