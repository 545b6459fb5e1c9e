package dev.flashsale.api.purchase;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import dev.flashsale.api.security.Shopper;
import dev.flashsale.api.status.OrderTracker;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.common.order.OrderStatus;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import java.util.UUID;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
class OrderStatusController {

    private final OrderTracker tracker;
    private final PurchaseProperties properties;

    OrderStatusController(OrderTracker tracker, PurchaseProperties properties) {
        this.tracker = tracker;
        this.properties = properties;
    }

    /** The owner or an admin sees the order; to anyone else it does not exist. */
    @GetMapping(path = "/api/v1/orders/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "An order (its owner or an admin; to anyone else it does not exist)")
    @ApiResponse(
            responseCode = "200",
            description = "The order",
            headers =
                    @Header(
                            name = "Retry-After",
                            description = "While QUEUED: seconds before polling again",
                            schema = @Schema(type = "integer")))
    ResponseEntity<OrderView> get(@PathVariable UUID id, Authentication authentication) {
        Shopper caller = Shopper.of(authentication);
        OrderView order = tracker.find(id)
                .filter(found -> caller.admin() || found.userId().equals(caller.userId()))
                .orElseThrow(() -> new ApiProblem(ProblemCode.ORDER_NOT_FOUND, "No such order."));
        ResponseEntity.BodyBuilder response = ResponseEntity.ok();
        if (order.status() == OrderStatus.QUEUED) {
            response.header(HttpHeaders.RETRY_AFTER, Problems.seconds(properties.pollAfter()));
        }
        return response.body(order);
    }
}
