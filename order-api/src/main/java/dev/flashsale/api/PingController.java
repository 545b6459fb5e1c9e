package dev.flashsale.api;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A trivial authenticated endpoint: the app's own ceiling, the baseline the drills compare against. */
@RestController
class PingController {

    @GetMapping("/api/v1/ping")
    @Operation(summary = "Authenticated no-op: the drills' baseline")
    @ApiResponse(responseCode = "204", description = "Nothing")
    ResponseEntity<Void> ping() {
        return ResponseEntity.noContent().build();
    }
}
