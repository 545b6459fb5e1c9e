package dev.flashsale.api;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A trivial authenticated endpoint: the app's own ceiling, the baseline the drills compare against. */
@RestController
class PingController {

    @GetMapping("/api/v1/ping")
    ResponseEntity<Void> ping() {
        return ResponseEntity.noContent().build();
    }
}
