package dev.flashsale.api.problem;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/**
 * A refusal the API answers with an RFC 9457 problem: the HTTP status, a stable {@code code} clients can
 * branch on, a human-readable detail, and for 503 a Retry-After.
 */
public class ApiProblem extends RuntimeException {

    private final HttpStatus status;
    private final String code;
    private final @Nullable Duration retryAfter;

    public ApiProblem(HttpStatus status, String code, String detail, @Nullable Duration retryAfter) {
        super(detail, null, false, false);
        this.status = status;
        this.code = code;
        this.retryAfter = retryAfter;
    }

    public ApiProblem(HttpStatus status, String code, String detail) {
        this(status, code, detail, null);
    }

    public static ApiProblem unavailable(String detail, Duration retryAfter) {
        return new ApiProblem(HttpStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE", detail, retryAfter);
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
}
