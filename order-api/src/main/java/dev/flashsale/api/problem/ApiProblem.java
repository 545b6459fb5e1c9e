package dev.flashsale.api.problem;

import java.time.Duration;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/**
 * A refusal the API answers with an RFC 9457 problem: its {@link ProblemCode} (status, stable code, type),
 * a human-readable detail, for 503 a Retry-After, and for an order whose outcome is not known the order's
 * id (answered as {@code orderId} and Location).
 */
public class ApiProblem extends RuntimeException {

    private final ProblemCode code;
    private final @Nullable Duration retryAfter;
    private final @Nullable UUID orderId;

    public ApiProblem(ProblemCode code, String detail, @Nullable Duration retryAfter) {
        this(code, detail, retryAfter, null);
    }

    private ApiProblem(ProblemCode code, String detail, @Nullable Duration retryAfter, @Nullable UUID orderId) {
        super(detail, null, false, false);
        this.code = code;
        this.retryAfter = retryAfter;
        this.orderId = orderId;
    }

    public ApiProblem(ProblemCode code, String detail) {
        this(code, detail, null);
    }

    public static ApiProblem unavailable(String detail, Duration retryAfter) {
        return new ApiProblem(ProblemCode.UNAVAILABLE, detail, retryAfter);
    }

    /**
     * 503 for an order that may exist or may still be made: its id and Location go with the answer, so that
     * a client without an Idempotency-Key can find it too.
     */
    public static ApiProblem outcomeUnknown(UUID orderId, String detail, Duration retryAfter) {
        return new ApiProblem(ProblemCode.OUTCOME_UNKNOWN, detail, retryAfter, orderId);
    }

    /** A purchase refused by what the sale holds: sold out, over the shopper's limit, not open. */
    public static ApiProblem refused(ProblemCode refusal) {
        return new ApiProblem(
                refusal,
                switch (refusal) {
                    case SOLD_OUT -> "The sale is sold out.";
                    case PURCHASE_LIMIT_REACHED -> "This purchase would exceed your limit for the sale.";
                    case SALE_NOT_ACTIVE -> "The sale is not open.";
                    default -> throw new IllegalArgumentException("not a refusal: " + refusal);
                });
    }

    public HttpStatus status() {
        return code.status();
    }

    public ProblemCode code() {
        return code;
    }

    public @Nullable Duration retryAfter() {
        return retryAfter;
    }

    public @Nullable UUID orderId() {
        return orderId;
    }
}
