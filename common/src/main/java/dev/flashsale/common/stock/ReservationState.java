package dev.flashsale.common.stock;

import dev.flashsale.common.order.OrderStatus;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The life of a reservation record in Redis. RESERVED, PUBLISHED, CLAIMED and WRITING hold stock; the
 * others are final. Only a RESERVED record may be released by the API without asking Postgres: once the
 * broker confirmed the message (PUBLISHED), a worker took it (CLAIMED) or the API began its SYNC write
 * (WRITING), Postgres decides, and the reconciler settles what nobody finished.
 */
public enum ReservationState {
    /** Stock held; the order is neither in Postgres nor confirmed by the broker yet. */
    RESERVED(OrderStatus.QUEUED),
    /** The broker confirmed the message: the order will be written. */
    PUBLISHED(OrderStatus.QUEUED),
    /** A worker is writing it. */
    CLAIMED(OrderStatus.QUEUED),
    /** The API is writing it in a SYNC transaction (or its commit's outcome is not known yet). */
    WRITING(OrderStatus.QUEUED),
    CONFIRMED(OrderStatus.CONFIRMED),
    REJECTED(OrderStatus.REJECTED),
    FAILED(OrderStatus.FAILED),
    /** Given back before anyone was told the order exists (a 503 or an abandoned request). */
    RELEASED(null),
    /** A refused attempt remembered for an Idempotency-Key replay; it never held stock. */
    REFUSED(null);

    /** The pending states: the reservation still takes stock and sits in its sale's pending set. */
    public static final Set<ReservationState> PENDING = EnumSet.of(RESERVED, PUBLISHED, CLAIMED, WRITING);

    private final @Nullable OrderStatus orderStatus;

    ReservationState(@Nullable OrderStatus orderStatus) {
        this.orderStatus = orderStatus;
    }

    /** The status a shopper sees, or null when no order exists for this record. */
    public @Nullable OrderStatus orderStatus() {
        return orderStatus;
    }

    static String csv(Set<ReservationState> states) {
        return states.stream().map(Enum::name).collect(Collectors.joining(","));
    }
}
