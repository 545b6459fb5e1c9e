package dev.flashsale.api.problem;

import java.net.URI;
import java.util.List;
import java.util.Map;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.validation.method.ParameterValidationResult;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * The one place that turns failures into RFC 9457 problem details with a stable {@code code}. No exception
 * message or stack trace reaches a client.
 */
@RestControllerAdvice
class ProblemAdvice extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ProblemAdvice.class);

    @ExceptionHandler(ApiProblem.class)
    ResponseEntity<ProblemDetail> apiProblem(ApiProblem problem) {
        ProblemDetail body = Problems.of(problem.code(), String.valueOf(problem.getMessage()));
        ResponseEntity.BodyBuilder response = ResponseEntity.status(problem.status());
        if (problem.retryAfter() != null) {
            response.header(HttpHeaders.RETRY_AFTER, Problems.seconds(problem.retryAfter()));
        }
        if (problem.orderId() != null) {
            body.setProperty("orderId", problem.orderId());
            response.location(URI.create("/api/v1/orders/" + problem.orderId()));
        }
        return response.body(body);
    }

    /** A dependency failed where nothing more specific caught it: say so, never 500. */
    @ExceptionHandler({DataAccessException.class, RedisConnectionFailureException.class, RedisSystemException.class})
    ResponseEntity<ProblemDetail> dependencyDown(Exception e) {
        log.warn("dependency failure: {}", e.toString());
        return apiProblem(ApiProblem.unavailable(
                "A backing service is unavailable; nothing was taken. Retry later.", Problems.DEFAULT_RETRY_AFTER));
    }

    /**
     * Checks the container makes only when the handler first reads part of the request — the request
     * firewall on header values (a non-ASCII Idempotency-Key or Prefer), Tomcat on a query string it cannot
     * parse (a parameter without a name): a malformed request, not a server error.
     */
    @ExceptionHandler({RequestRejectedException.class, InvalidParameterException.class})
    ResponseEntity<ProblemDetail> rejected(RuntimeException e) {
        HttpStatus status = HttpStatus.BAD_REQUEST;
        return ResponseEntity.status(status)
                .body(Problems.of(status, ProblemCode.forStatus(status), Problems.detailFor(status)));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ProblemDetail> unexpected(Exception e) {
        log.error("unexpected failure", e);
        return ResponseEntity.internalServerError().body(Problems.of(ProblemCode.INTERNAL_ERROR, "Unexpected error."));
    }

    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(
            MethodArgumentNotValidException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        List<Map<String, String>> errors = e.getBindingResult().getFieldErrors().stream()
                .map(error -> Problems.fieldError(error.getField(), error.getDefaultMessage()))
                .toList();
        List<Map<String, String>> global = e.getBindingResult().getGlobalErrors().stream()
                .map(error -> Problems.fieldError(error.getObjectName(), error.getDefaultMessage()))
                .toList();
        return ResponseEntity.badRequest().body(Problems.validation(concat(errors, global)));
    }

    @Override
    protected ResponseEntity<Object> handleHandlerMethodValidationException(
            HandlerMethodValidationException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        List<Map<String, String>> errors = e.getParameterValidationResults().stream()
                .flatMap(result -> result.getResolvableErrors().stream()
                        .map(error -> Problems.fieldError(name(result), error.getDefaultMessage())))
                .toList();
        return ResponseEntity.badRequest().body(Problems.validation(errors));
    }

    /** Every other Spring MVC error (400 unreadable body, 404, 405, 415, ...) keeps its status and gains a code. */
    @Override
    protected ResponseEntity<Object> handleExceptionInternal(
            Exception e, @Nullable Object body, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        ResponseEntity<Object> response = super.handleExceptionInternal(e, body, headers, status, request);
        if (response != null && response.getBody() instanceof ProblemDetail problem) {
            problem.setProperty("code", ProblemCode.forStatus(status).code());
            problem.setDetail(Problems.detailFor(status));
        }
        return response;
    }

    private static String name(ParameterValidationResult result) {
        String name = result.getMethodParameter().getParameterName();
        return name == null ? "parameter" : name;
    }

    private static List<Map<String, String>> concat(List<Map<String, String>> a, List<Map<String, String>> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }
}
