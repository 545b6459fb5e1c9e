package dev.flashsale.worker.drain;

import dev.flashsale.worker.PostgresTimeouts;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
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
    /** Worth another attempt after a delay: a deadlock, a lock timeout, a commit whose outcome is unknown. */
    TRANSIENT,
    /** Another attempt cannot help: a constraint violation, a bug. */
    PERMANENT;

    boolean isTransient() {
        return this != PERMANENT;
    }

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
}
