package dev.flashsale.worker.drain;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;

class FailureKindTests {

    @Test
    void treats_a_postgres_lock_or_statement_timeout_as_transient() {
        for (String state : new String[] {"55P03", "57014"}) {
            assertThat(FailureKind.of(new UncategorizedSQLException(
                            "update sale_stock", "update sale_stock", new SQLException("timed out", state))))
                    .isEqualTo(FailureKind.TRANSIENT);
        }
    }

    static Stream<Exception> outOfReach() {
        return Stream.of(
                new CannotGetJdbcConnectionException("pool exhausted"),
                new CannotCreateTransactionException("no connection", new SQLTransientConnectionException("timeout")),
                new RedisConnectionFailureException("refused"),
                new QueryTimeoutException("redis command timed out"));
    }

    @ParameterizedTest
    @MethodSource("outOfReach")
    void treats_a_store_out_of_reach_as_unreachable(Exception failure) {
        assertThat(FailureKind.of(failure)).isEqualTo(FailureKind.UNREACHABLE);
    }

    static Stream<Exception> deadlocksLockTimeoutsAndUnknownCommits() {
        return Stream.of(
                new PessimisticLockingFailureException("deadlock detected"),
                new CannotAcquireLockException("lock timeout"),
                new TransientDataAccessResourceException("connection reset"),
                new TransactionSystemException("could not commit"));
    }

    @ParameterizedTest
    @MethodSource("deadlocksLockTimeoutsAndUnknownCommits")
    void treats_deadlocks_lock_timeouts_and_unknown_commits_as_transient(Exception failure) {
        assertThat(FailureKind.of(failure)).isEqualTo(FailureKind.TRANSIENT);
    }

    @Test
    void treats_a_redis_refusing_writes_for_now_as_transient() {
        // What Spring makes of Redis's answer to a script under maxmemory with noeviction, as the claim met it.
        assertThat(
                        FailureKind.of(
                                new RedisSystemException(
                                        "Error in execution",
                                        new RedisCommandExecutionException(
                                                "OOM command not allowed when used memory > 'maxmemory'. script: d68275, on @user_script:1."))))
                .isEqualTo(FailureKind.TRANSIENT);
        assertThat(FailureKind.of(new RedisSystemException(
                        "Error in execution",
                        new RedisCommandExecutionException("READONLY You can't write against a read only replica."))))
                .isEqualTo(FailureKind.TRANSIENT);
        assertThat(FailureKind.of(new RedisSystemException(
                        "Error in execution",
                        new RedisCommandExecutionException(
                                "ERR user_script:7: Script attempted to access a non local key"))))
                .isEqualTo(FailureKind.PERMANENT);
    }

    @Test
    void looks_for_the_reason_along_the_causes() {
        assertThat(FailureKind.of(new IllegalStateException("wrapped", new RedisConnectionFailureException("down"))))
                .isEqualTo(FailureKind.UNREACHABLE);
    }

    @Test
    void treats_constraint_violations_and_bugs_as_permanent() {
        assertThat(FailureKind.of(new DataIntegrityViolationException("check constraint")))
                .isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.of(new RedisSystemException("ERR script", new IllegalStateException())))
                .isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.of(new NullPointerException())).isEqualTo(FailureKind.PERMANENT);
        assertThat(FailureKind.PERMANENT.isTransient()).isFalse();
        assertThat(FailureKind.UNREACHABLE.isTransient()).isTrue();
    }
}
