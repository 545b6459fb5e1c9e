package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.UUID;

/** A reservation record as Redis holds it. */
public record Reservation(
        long saleId,
        UUID orderId,
        String userId,
        int quantity,
        ReservationState state,
        PurchasePath mode,
        Instant createdAt,
        String code) {

    /** Fields before the user, who comes last and may hold any character. */
    private static final int FIXED_FIELDS = 5;

    /** Reads a record as the scripts write it: {@code state:mode:code:qty:createdMillis:user} (shared.lua). */
    static Reservation parse(long saleId, UUID orderId, String record) {
        String[] fields = record.split(":", FIXED_FIELDS + 1);
        if (fields.length != FIXED_FIELDS + 1) {
            throw new IllegalStateException("reservation record of " + orderId + " unreadable: " + record);
        }
        return new Reservation(
                saleId,
                orderId,
                fields[5],
                Integer.parseInt(fields[3]),
                ReservationState.valueOf(fields[0]),
                PurchasePath.valueOf(fields[1]),
                Instant.ofEpochMilli(Long.parseLong(fields[4])),
                fields[2]);
    }
}
