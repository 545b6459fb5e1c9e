package dev.flashsale.worker;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * Postgres waits cut short by the worker's bounds (app.worker.postgres: lock_timeout, statement_timeout, set
 * in every transaction by {@link BoundedTransactions}): a row lock held open elsewhere, a statement that stalled. The drain and
 * the reconciler count them as {@code flashsale.worker.postgres.timeouts}, the metric to alert on.
 */
public final class PostgresTimeouts {

    public static final String METER = "flashsale.worker.postgres.timeouts";

    /** lock_not_available: lock_timeout expired. */
    private static final String LOCK_TIMEOUT = "55P03";

    /** query_canceled: statement_timeout expired (or a cancel request). */
    private static final String STATEMENT_TIMEOUT = "57014";

    private PostgresTimeouts() {}

    public static boolean isTimeout(@Nullable Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql
                    && (LOCK_TIMEOUT.equals(sql.getSQLState()) || STATEMENT_TIMEOUT.equals(sql.getSQLState()))) {
                return true;
            }
        }
        return false;
    }
}
