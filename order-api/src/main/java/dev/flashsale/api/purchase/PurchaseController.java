package dev.flashsale.api.purchase;

import dev.flashsale.api.PurchaseRoute;
import dev.flashsale.api.door.DoorPlace;
import dev.flashsale.api.door.SaleLine;
import dev.flashsale.api.input.Preference;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.api.security.Shopper;
import dev.flashsale.api.status.OrderView;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

@RestController
class PurchaseController {

    /** 1 to 128 visible ASCII characters. */
    private static final Pattern IDEMPOTENCY_KEY = Pattern.compile("[\\x21-\\x7E]{1,128}");

    private final Purchases purchases;
    private final PreferWait preferWait;
    private final KnownRefusals known;
    private final PurchaseProperties properties;
    private final SaleLine line;

    PurchaseController(
            Purchases purchases,
            PreferWait preferWait,
            KnownRefusals known,
            PurchaseProperties properties,
            SaleLine line) {
        this.purchases = purchases;
        this.preferWait = preferWait;
        this.known = known;
        this.properties = properties;
        this.line = line;
    }

    /** At most the largest per-user limit a sale can have; the sale's own limit is checked next. */
    record PurchaseRequest(
            @NotNull @Min(1) @Max(1_000) @Nullable Integer quantity) {}

    /**
     * {@code produces}: a client that cannot read JSON is answered 406 before anything is sold, not after.
     */
    @PostMapping(path = PurchaseRoute.TEMPLATE, produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Buy units of a sale (shopper)")
    @ApiResponse(
            responseCode = "201",
            description = "SYNC, or ASYNC confirmed within Prefer: wait: the order, CONFIRMED",
            content = @Content(schema = @Schema(implementation = OrderView.class)),
            headers = {
                @Header(name = "Location", description = "The order", schema = @Schema(type = "string")),
                @Header(
                        name = "Preference-Applied",
                        description = "The Prefer values honoured",
                        schema = @Schema(type = "string"))
            })
    @ApiResponse(
            responseCode = "202",
            description = "ASYNC: the order is QUEUED for a worker; poll its Location",
            content = @Content(schema = @Schema(implementation = OrderView.class)),
            headers = {
                @Header(name = "Location", description = "The order", schema = @Schema(type = "string")),
                @Header(
                        name = "Retry-After",
                        description = "Seconds before polling",
                        schema = @Schema(type = "integer")),
                @Header(
                        name = "Preference-Applied",
                        description = "The Prefer values honoured",
                        schema = @Schema(type = "string"))
            })
    ResponseEntity<?> purchase(
            @PathVariable long saleId,
            @Valid @RequestBody PurchaseRequest request,
            @Parameter(
                            description = "Binds the request to one order for 24 h: a repeat gets the original answer",
                            schema = @Schema(type = "string", pattern = "^[\\x21-\\x7E]{1,128}$"))
                    @RequestHeader(name = "Idempotency-Key", required = false)
                    @Nullable
                    String idempotencyKey,
            @Parameter(description = "RFC 7240: respond-async (under AUTO) and wait=N (ASYNC, at most 10 s)")
                    @RequestHeader(name = "Prefer", required = false)
                    @Nullable
                    List<String> prefer,
            @Parameter(
                            description =
                                    "The shopper's place in the sale's line, as the API answered it (Line-Place header,"
                                            + " or linePlace in a line answer): a retry with it keeps the place; without"
                                            + " it, a purchase joins the line at the back, unless its shopper already"
                                            + " had a place for that quantity that may be served",
                            schema = @Schema(type = "string", maxLength = 200))
                    @RequestHeader(name = SaleLine.PLACE_HEADER, required = false)
                    @Nullable
                    String linePlace,
            Authentication authentication,
            HttpServletRequest servletRequest,
            HttpServletResponse servletResponse) {
        if (idempotencyKey != null && !IDEMPOTENCY_KEY.matcher(idempotencyKey).matches()) {
            throw new ApiProblem(
                    ProblemCode.VALIDATION_FAILED, "Idempotency-Key must be 1 to 128 visible ASCII characters.");
        }
        String userId = Shopper.of(authentication).userId();
        ApiProblem refusal = known.refusal(saleId, userId, request.quantity(), idempotencyKey != null);
        if (refusal != null) {
            // Answered, not thrown: an exception's way through MVC's resolvers cost a quarter of a refusal,
            // and after a sell-out nearly every purchase is one.
            return ResponseEntity.status(refusal.status())
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .body(Problems.of(refusal.code(), String.valueOf(refusal.getMessage())));
        }
        SaleLine.Admission admission = line.admit(
                servletRequest, servletResponse, saleId, userId, request.quantity(), linePlace, idempotencyKey != null);
        if (admission instanceof SaleLine.Admission.Wait(ProblemDetail answer, Duration retryAfter)) {
            return ResponseEntity.status(answer.getStatus())
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .header(HttpHeaders.RETRY_AFTER, Problems.seconds(retryAfter))
                    .body(answer);
        }
        Preference preference = Preference.parse(prefer);
        PurchaseOutcome outcome = purchases.purchase(saleId, userId, request.quantity(), idempotencyKey, preference);
        if (outcome.status() == HttpStatus.ACCEPTED && preference.waitFor() != null) {
            // Taken: from here the request only waits for the worker, and a waiting shopper keeps nobody out.
            DoorPlace.leave(servletRequest);
            outcome = preferWait.awaitFinal(outcome, preference.waitFor());
        }
        ResponseEntity.BodyBuilder response = ResponseEntity.status(outcome.status())
                .location(URI.create("/api/v1/orders/" + outcome.order().orderId()));
        if (outcome.status() == HttpStatus.ACCEPTED) {
            response.header("Retry-After", Problems.seconds(properties.pollAfter()));
        }
        if (outcome.preferenceApplied() != null) {
            response.header("Preference-Applied", outcome.preferenceApplied());
        }
        response.header("Vary", "Prefer");
        return response.body(outcome.order());
    }
}
