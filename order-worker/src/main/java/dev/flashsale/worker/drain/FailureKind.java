package dev.flashsale.worker.drain;

import dev.flashsale.worker.PostgresTimeouts;
import io.lettuce.core.RedisCommandExecutionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;

/** Whether writing an order again later can succeed where it just failed. */
enum FailureKind {
    /**
     * Postgres or Redis could not be reached (no connection, a timeout): the rest of the batch would only
     * wait for the same timeout, so it goes to the retry queue without trying.
     */
    UNREACHABLE,
    /**
     * Worth another attempt after a delay: a deadlock, a lock timeout, a commit whose outcome is unknown, a
     * Redis that refuses writes for now.
     */
    TRANSIENT,
    /** Another attempt cannot help: a constraint violation, a bug. */
    PERMANENT;

    boolean isTransient() {
        return this != PERMANENT;
    }

    /**
     * Redis's error codes for a refusal that ends by itself: OOM (maxmemory with noeviction, until memory
     * frees), LOADING (a restart replaying its data), BUSY (a script running long), READONLY and MASTERDOWN
     * (a failover under way), TRYAGAIN. Spring files them with a script's own errors, as a permanent
     * RedisSystemException; taken for permanent, an OOM of a few seconds failed and dead-lettered every
     * order that met it.
     */
    private static final Set<String> REDIS_REFUSALS =
            Set.of("OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN");

    static FailureKind of(Throwable failure) {
        // Spring leaves Postgres's lock_not_available and query_canceled uncategorized: a row lock held open
        // elsewhere is worth a retry, and must not fail the order as a constraint would.
        if (PostgresTimeouts.isTimeout(failure)) {
            return TRANSIENT;
        }
        for (@Nullable Throwable cause = failure; cause != null; cause = cause.getCause()) {
            // Connectivity first: Spring files a Redis connection failure or a Hikari timeout under
            // "non-transient" resource failures, and a query timeout under transient ones.
            if (cause instanceof DataAccessResourceFailureException
                    || cause instanceof CannotCreateTransactionException
                    || cause instanceof QueryTimeoutException) {
                return UNREACHABLE;
            }
            if (cause instanceof RedisCommandExecutionException refused && isRefusal(refused.getMessage())) {
                return TRANSIENT;
            }
            if (cause instanceof TransientDataAccessException
                    || cause instanceof RecoverableDataAccessException
                    || cause instanceof TransactionSystemException
                    || cause instanceof SQLTransientException
                    || cause instanceof SQLRecoverableException) {
                return TRANSIENT;
            }
        }
        return PERMANENT;
    }

    private static boolean isRefusal(@Nullable String message) {
        if (message == null) {
            return false;
        }
        int end = message.indexOf(' ');
        return REDIS_REFUSALS.contains(end < 0 ? message : message.substring(0, end));
    }
}
