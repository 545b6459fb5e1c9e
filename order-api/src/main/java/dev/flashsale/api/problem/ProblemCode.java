package dev.flashsale.api.problem;

import java.net.URI;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;

/**
 * Every problem the API answers: its HTTP status, the stable {@code code} clients branch on, and its
 * {@code type} URI. The codes are a contract (OpenAPI, clients, load tests): a constant may be renamed,
 * its {@code code} string may not.
 */
public enum ProblemCode {
    SOLD_OUT(HttpStatus.CONFLICT, "SOLD_OUT"),
    PURCHASE_LIMIT_REACHED(HttpStatus.CONFLICT, "PURCHASE_LIMIT_REACHED"),
    SALE_NOT_ACTIVE(HttpStatus.CONFLICT, "SALE_NOT_ACTIVE"),
    DUPLICATE_SKU(HttpStatus.CONFLICT, "DUPLICATE_SKU"),
    REBUILD_IN_PROGRESS(HttpStatus.CONFLICT, "REBUILD_IN_PROGRESS"),
    IDEMPOTENCY_KEY_REUSED(HttpStatus.UNPROCESSABLE_CONTENT, "IDEMPOTENCY_KEY_REUSED"),
    TOO_MANY_REQUESTS(HttpStatus.TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS"),
    /** 503: nothing was taken; retry after Retry-After. */
    UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE, "UNAVAILABLE"),
    /** 503 whose order may exist: the client finds it at its Location. */
    OUTCOME_UNKNOWN(HttpStatus.SERVICE_UNAVAILABLE, "OUTCOME_UNKNOWN"),
    /** 503 for a purchase while its sale's Redis state is missing or being rebuilt. */
    SALE_REBUILDING(HttpStatus.SERVICE_UNAVAILABLE, "SALE_REBUILDING"),
    REBUILD_LAPSED(HttpStatus.SERVICE_UNAVAILABLE, "REBUILD_LAPSED"),
    /** 503: the shopper's place in the sale's line is served, and the API is at capacity; retry with it. */
    IN_LINE(HttpStatus.SERVICE_UNAVAILABLE, "IN_LINE"),
    /** 503: the places ahead in the sale's line cover the units left; retry with the place after Retry-After. */
    BEYOND_STOCK(HttpStatus.SERVICE_UNAVAILABLE, "BEYOND_STOCK"),
    /** 503: no unit is left, but reservations hold units that may come back: not sold out yet. */
    UNITS_HELD(HttpStatus.SERVICE_UNAVAILABLE, "UNITS_HELD"),
    /** 400: the Line-Place sent was not issued to this shopper for this sale and quantity. */
    LINE_PLACE_INVALID(HttpStatus.BAD_REQUEST, "LINE_PLACE_INVALID"),
    VALIDATION_FAILED(HttpStatus.BAD_REQUEST, "VALIDATION_FAILED"),
    SALE_NOT_FOUND(HttpStatus.NOT_FOUND, "SALE_NOT_FOUND"),
    ORDER_NOT_FOUND(HttpStatus.NOT_FOUND, "ORDER_NOT_FOUND"),
    // The codes of a status no handler gave a more specific one (see forStatus).
    MALFORMED_REQUEST(HttpStatus.BAD_REQUEST, "MALFORMED_REQUEST"),
    UNAUTHORIZED(HttpStatus.UNAUTHORIZED, "UNAUTHORIZED"),
    FORBIDDEN(HttpStatus.FORBIDDEN, "FORBIDDEN"),
    NOT_FOUND(HttpStatus.NOT_FOUND, "NOT_FOUND"),
    METHOD_NOT_ALLOWED(HttpStatus.METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
    NOT_ACCEPTABLE(HttpStatus.NOT_ACCEPTABLE, "NOT_ACCEPTABLE"),
    PAYLOAD_TOO_LARGE(HttpStatus.CONTENT_TOO_LARGE, "PAYLOAD_TOO_LARGE"),
    URI_TOO_LONG(HttpStatus.URI_TOO_LONG, "URI_TOO_LONG"),
    UNSUPPORTED_MEDIA_TYPE(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE"),
    HEADERS_TOO_LARGE(HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "HEADERS_TOO_LARGE"),
    /** Any other 4xx: answered with the status it came with. */
    BAD_REQUEST(HttpStatus.BAD_REQUEST, "BAD_REQUEST"),
    /** Any other 5xx: answered with the status it came with. */
    INTERNAL_ERROR(HttpStatus.INTERNAL_SERVER_ERROR, "INTERNAL_ERROR");

    private final HttpStatus status;
    private final String code;
    private final URI type;

    ProblemCode(HttpStatus status, String code) {
        this.status = status;
        this.code = code;
        // RFC 9457's default: the status says what kind of problem it is, {@code code} says which.
        this.type = URI.create("about:blank");
    }

    public HttpStatus status() {
        return status;
    }

    /** The {@code code} member of the problem body. */
    public String code() {
        return code;
    }

    public URI type() {
        return type;
    }

    /**
     * A refusal the reserve script or the order store answered by its code (SOLD_OUT, SALE_NOT_ACTIVE,
     * PURCHASE_LIMIT_REACHED).
     *
     * @throws IllegalArgumentException for any other code: the stores and this enum disagree
     */
    public static ProblemCode refusal(String code) {
        for (ProblemCode refusal : new ProblemCode[] {SOLD_OUT, PURCHASE_LIMIT_REACHED, SALE_NOT_ACTIVE}) {
            if (refusal.code.equals(code)) {
                return refusal;
            }
        }
        throw new IllegalArgumentException("not a refusal code: " + code);
    }

    /** The code of a status no handler gave a more specific one. */
    public static ProblemCode forStatus(HttpStatusCode status) {
        return switch (status.value()) {
            case 400 -> MALFORMED_REQUEST;
            case 401 -> UNAUTHORIZED;
            case 403 -> FORBIDDEN;
            case 404 -> NOT_FOUND;
            case 405 -> METHOD_NOT_ALLOWED;
            case 406 -> NOT_ACCEPTABLE;
            case 413 -> PAYLOAD_TOO_LARGE;
            case 414 -> URI_TOO_LONG;
            case 415 -> UNSUPPORTED_MEDIA_TYPE;
            case 429 -> TOO_MANY_REQUESTS;
            case 431 -> HEADERS_TOO_LARGE;
            case 503 -> UNAVAILABLE;
            default -> status.is5xxServerError() ? INTERNAL_ERROR : BAD_REQUEST;
        };
    }
}
