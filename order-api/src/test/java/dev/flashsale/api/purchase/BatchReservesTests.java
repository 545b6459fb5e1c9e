package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;

/** Which failed reserve calls may have run (an ASYNC shopper is then told the outcome is unknown). */
class BatchReservesTests {

    @Test
    void a_call_redis_refused_with_an_error_or_that_never_left_reserved_nothing() {
        assertThat(BatchReserves.refusedOrUnsent(new RedisCommandExecutionException("OOM command not allowed")))
                .isTrue();
        assertThat(BatchReserves.refusedOrUnsent(
                        new RedisSystemException("wrapped", new RedisCommandExecutionException("LOADING"))))
                .isTrue();
        assertThat(BatchReserves.refusedOrUnsent(new RedisConnectionException("Connection refused")))
                .isTrue();
        assertThat(BatchReserves.refusedOrUnsent(new RedisConnectionFailureException("no connection")))
                .isTrue();
    }

    @Test
    void a_call_without_an_answer_may_have_run() {
        assertThat(BatchReserves.refusedOrUnsent(new RedisCommandTimeoutException("Command timed out")))
                .isFalse();
        assertThat(BatchReserves.refusedOrUnsent(new QueryTimeoutException("Redis command timed out")))
                .isFalse();
        assertThat(BatchReserves.refusedOrUnsent(new RedisException("Connection closed")))
                .isFalse();
        assertThat(BatchReserves.refusedOrUnsent(new IllegalStateException("interrupted while waiting for Redis")))
                .isFalse();
    }
}
