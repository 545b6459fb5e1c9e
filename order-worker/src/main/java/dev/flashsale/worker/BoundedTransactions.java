package dev.flashsale.worker;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.TransactionDefinition;

/**
 * The worker's transaction manager: every transaction sets its own lock_timeout and statement_timeout, LOCAL
 * to it, in its first round trip. In production the worker reaches Postgres through PgBouncer in transaction
 * mode (CloudNativePG's Pooler), which ignores the {@code options} startup parameter and hands each
 * transaction whichever server connection is free, so neither a setting sent at connection start nor a
 * session-level SET would reach the transaction that needs it. Statements outside a transaction (the
 * reconciler's reads) take no row lock and are bounded by the socket timeout.
 */
final class BoundedTransactions extends JdbcTransactionManager {

    private final String setBounds;

    BoundedTransactions(DataSource dataSource, PostgresBounds bounds) {
        super(dataSource);
        // Whole milliseconds from a validated Duration: nothing of the caller's is spliced into the SQL.
        this.setBounds = "select set_config('lock_timeout', '"
                + bounds.lockTimeout().toMillis() + "', true), " + "set_config('statement_timeout', '"
                + bounds.statementTimeout().toMillis() + "', true)";
    }

    @Override
    protected void prepareTransactionalConnection(Connection connection, TransactionDefinition definition)
            throws SQLException {
        super.prepareTransactionalConnection(connection, definition);
        try (Statement statement = connection.createStatement()) {
            statement.execute(setBounds);
        }
    }
}
