package dev.flashsale.common.stock;

import dev.flashsale.common.order.PurchasePath;
import java.time.Instant;
import java.util.UUID;

/** A reservation record as Redis holds it; {@code instance}: the API instance holding it, or empty. */
public record Reservation(
        long saleId,
        UUID orderId,
        String userId,
        int quantity,
        ReservationState state,
        PurchasePath mode,
        Instant createdAt,
        String code,
        String instance) {

    /** Fields before the user, who comes last and may hold any character. */
    private static final int FIXED_FIELDS = 5;

    /**
     * Reads a record as the scripts write it (shared.lua): {@code state:mode:code:qty:createdMillis:user}, its date
     * {@code createdMillis@instance} while an API instance's request holds it.
     */
    static Reservation parse(long saleId, UUID orderId, String record) {
        String[] fields = record.split(":", FIXED_FIELDS + 1);
        if (fields.length != FIXED_FIELDS + 1) {
            throw new IllegalStateException("reservation record of " + orderId + " unreadable: " + record);
        }
        int at = fields[4].indexOf('@');
        String created = at < 0 ? fields[4] : fields[4].substring(0, at);
        return new Reservation(
                saleId,
                orderId,
                fields[5],
                Integer.parseInt(fields[3]),
                ReservationState.valueOf(fields[0]),
                PurchasePath.valueOf(fields[1]),
                Instant.ofEpochMilli(Long.parseLong(created)),
                fields[2],
                at < 0 ? "" : fields[4].substring(at + 1));
    }
}
