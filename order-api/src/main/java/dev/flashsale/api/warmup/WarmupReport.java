package dev.flashsale.api.warmup;

import java.time.Duration;
import java.util.Map;

/**
 * What a warm-up did.
 *
 * @param saleId the throw-away sale it rehearsed on (never visible to shoppers, nothing of it is kept)
 * @param shopperPrefix the prefix of the user ids it made up
 * @param answers its own requests' answers, by HTTP status (0: no answer)
 * @param lineAnswers the answers to its crowd in a throw-away sale's line, by HTTP status: 404 for a served
 *     place (Postgres does not know the sale), 503 for a place told to wait and its retry
 * @param scriptCalls stock script calls on the throw-away sale
 * @param rolledBack order batches placed in Postgres and rolled back
 * @param confirmed unroutable batch messages the broker confirmed
 * @param took how long readiness was held back
 * @param failure why it stopped early, or empty when every step ran
 */
public record WarmupReport(
        long saleId,
        String shopperPrefix,
        Map<Integer, Integer> answers,
        Map<Integer, Integer> lineAnswers,
        int scriptCalls,
        int rolledBack,
        int confirmed,
        Duration took,
        String failure) {

    int requests() {
        return answers.values().stream().mapToInt(Integer::intValue).sum();
    }

    /**
     * It stopped early, or one of its own requests got a server error or no answer: it only asks for 404s and
     * 400s, and its crowd in a line for 404s and the line's own 503s; anything else means the purchase path
     * (or a dependency) is broken on this instance.
     */
    boolean failed() {
        return !failure.isEmpty()
                || answers.keySet().stream().anyMatch(status -> status == 0 || status >= 500)
                || lineAnswers.keySet().stream().anyMatch(status -> status != 404 && status != 503);
    }
}
