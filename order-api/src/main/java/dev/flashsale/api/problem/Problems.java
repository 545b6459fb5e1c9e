package dev.flashsale.api.problem;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;

/** Builders for the problem bodies shared by the MVC advice and the security handlers. */
public final class Problems {

    static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(2);

    private Problems() {}

    public static ProblemDetail of(ProblemCode code, String detail) {
        return of(code.status(), code, detail);
    }

    /** A problem answered with a status of its own: a code for a whole class of statuses (see {@link ProblemCode#forStatus}). */
    public static ProblemDetail of(HttpStatusCode status, ProblemCode code, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setType(code.type());
        problem.setProperty("code", code.code());
        return problem;
    }

    static ProblemDetail validation(List<Map<String, String>> errors) {
        ProblemDetail problem = of(ProblemCode.VALIDATION_FAILED, "The request has invalid fields: see errors.");
        problem.setProperty("errors", errors);
        return problem;
    }

    public static Map<String, String> fieldError(String field, @Nullable String message) {
        return Map.of("field", field, "message", message == null ? "is invalid" : message);
    }

    public static String seconds(Duration duration) {
        return Long.toString(Math.max(1, (duration.toMillis() + 999) / 1000));
    }

    /** A fixed text per status: nothing the client sent, and no exception message, is echoed. */
    static String detailFor(HttpStatusCode status) {
        return switch (status.value()) {
            case 400 -> "The request could not be read: check the path, headers and JSON body.";
            case 401 -> "A valid bearer token is required.";
            case 403 -> "This token may not do that.";
            case 404 -> "No such resource.";
            case 405 -> "This method is not supported here.";
            case 406 -> "The only representations offered are application/json and application/problem+json.";
            case 413 -> "The request body is too large.";
            case 414 -> "The request URI is too long.";
            case 415 -> "The request body must be application/json.";
            case 429 -> "Too many requests; retry after the time in Retry-After.";
            case 431 -> "The request headers are too large.";
            default -> status.is5xxServerError() ? "Unexpected error." : "The request was refused.";
        };
    }

    static String titleFor(HttpStatusCode status) {
        HttpStatus known = HttpStatus.resolve(status.value());
        return known == null ? "Error" : known.getReasonPhrase();
    }
}
