package dev.flashsale.worker;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.worker.postgres.*: how long one of the worker's transactions may wait in Postgres
 * (docs/operations.md#the-workers-timeouts). A batch writes in milliseconds; these bound what it meets when it does not.
 *
 * @param lockTimeout a row lock held open elsewhere (a forgotten psql session) costs a batch this, once per
 *     locked sale, whose orders then go to the retry queue while the others are written
 * @param statementTimeout a statement that stalls for any other reason is cut here
 */
@ConfigurationProperties("app.worker.postgres")
public record PostgresBounds(
        @DefaultValue("2s") Duration lockTimeout,
        @DefaultValue("5s") Duration statementTimeout) {

    public PostgresBounds {
        if (lockTimeout.toMillis() < 1 || statementTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("app.worker.postgres timeouts must be at least 1 ms (0 means none)");
        }
    }
}
