package dev.flashsale.api.problem;

import java.time.Duration;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/**
 * A refusal the API answers with an RFC 9457 problem: the HTTP status, a stable {@code code} clients can
 * branch on, a human-readable detail, for 503 a Retry-After, and for an order whose outcome is not known
 * the order's id (answered as {@code orderId} and Location).
 */
public class ApiProblem extends RuntimeException {

    /** A 503 whose order may exist: the client finds it at its Location. */
    public static final String OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN";

    private final HttpStatus status;
    private final String code;
    private final @Nullable Duration retryAfter;
    private final @Nullable UUID orderId;

    public ApiProblem(HttpStatus status, String code, String detail, @Nullable Duration retryAfter) {
        this(status, code, detail, retryAfter, null);
    }

    private ApiProblem(
            HttpStatus status, String code, String detail, @Nullable Duration retryAfter, @Nullable UUID orderId) {
        super(detail, null, false, false);
        this.status = status;
        this.code = code;
        this.retryAfter = retryAfter;
        this.orderId = orderId;
    }

    public ApiProblem(HttpStatus status, String code, String detail) {
        this(status, code, detail, null);
    }

    public static ApiProblem unavailable(String detail, Duration retryAfter) {
        return new ApiProblem(HttpStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE", detail, retryAfter);
    }

    /**
     * 503 for an order that may exist or may still be made: its id and Location go with the answer, so that
     * a client without an Idempotency-Key can find it too.
     */
    public static ApiProblem outcomeUnknown(UUID orderId, String detail, Duration retryAfter) {
        return new ApiProblem(HttpStatus.SERVICE_UNAVAILABLE, OUTCOME_UNKNOWN, detail, retryAfter, orderId);
    }

    public HttpStatus status() {
        return status;
    }

    public String code() {
        return code;
    }

    public @Nullable Duration retryAfter() {
        return retryAfter;
    }

    public @Nullable UUID orderId() {
        return orderId;
    }
}
