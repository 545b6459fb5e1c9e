package dev.flashsale.api.purchase;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.Problems;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * The bodies of refusals answered from memory, rendered once per sale and problem: after a sell-out nearly
 * every purchase is one, and the same bytes with a Content-Length cost a third of what a ProblemDetail
 * through Jackson and a chunked response did (docs/results/2026-11-26-flash-sale.md, "refusal profile").
 * The body is the one MVC writes for a {@link ProblemDetail}, its {@code instance} the request's path.
 */
@Component
class RefusalBodies {

    /** Sales times the handful of codes refused from memory; past it, start again rather than grow. */
    private static final int MAX_BODIES = 4_096;

    private final JsonMapper json;
    private final Map<Key, byte[]> bodies = new ConcurrentHashMap<>();

    RefusalBodies(JsonMapper json) {
        this.json = json;
    }

    private record Key(long saleId, ApiProblem problem) {}

    ResponseEntity<byte[]> of(long saleId, ApiProblem refusal) {
        if (bodies.size() >= MAX_BODIES) {
            bodies.clear();
        }
        byte[] body = bodies.computeIfAbsent(new Key(saleId, refusal), key -> render(saleId, refusal));
        return ResponseEntity.status(refusal.status())
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .contentLength(body.length)
                .body(body);
    }

    private byte[] render(long saleId, ApiProblem refusal) {
        ProblemDetail problem = Problems.of(refusal.status(), refusal.code(), String.valueOf(refusal.getMessage()));
        problem.setInstance(URI.create("/api/v1/sales/" + saleId + "/orders"));
        return json.writeValueAsBytes(problem);
    }
}
