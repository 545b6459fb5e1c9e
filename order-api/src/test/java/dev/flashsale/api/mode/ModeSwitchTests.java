package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.RETURNS_DEEP_STUBS;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.HashOperations;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

class ModeSwitchTests {

    @Test
    @SuppressWarnings("unchecked")
    void a_change_whose_audit_cannot_be_written_is_not_made() {
        StringRedisTemplate redis = mock(StringRedisTemplate.class);
        HashOperations<String, Object, Object> hashes = mock(HashOperations.class);
        when(redis.<Object, Object>opsForHash()).thenReturn(hashes);
        when(hashes.entries(anyString())).thenReturn(Map.of());
        JdbcClient jdbc = mock(JdbcClient.class, RETURNS_DEEP_STUBS);
        when(jdbc.sql(anyString())).thenThrow(new QueryTimeoutException("audit insert timed out"));
        ModeProperties properties = new ModeProperties("flashsale:unit:mode", Duration.ofMillis(500), ModeSetting.SYNC);
        AutoPilot autoPilot = mock(AutoPilot.class);
        ModeSwitch modes = new ModeSwitch(redis, jdbc, properties, autoPilot, Clock.systemUTC());

        assertThatThrownBy(() -> modes.change(ModeSetting.ASYNC, "ops", "drill"))
                .isInstanceOf(QueryTimeoutException.class);

        verify(hashes, never()).putAll(anyString(), org.mockito.ArgumentMatchers.anyMap());
        assertThat(modes.setting()).isEqualTo(ModeSetting.SYNC);
    }

    /**
     * CI caught it: a test set SYNC and its next purchase went ASYNC. The scheduled refresh had read the
     * flag (ASYNC) just before the change here wrote SYNC, and applied what it read after the change: for
     * up to a refresh interval this instance ran the mode ops had just changed away from.
     */
    @Test
    @SuppressWarnings("unchecked")
    void a_refresh_that_read_the_flag_before_a_change_here_does_not_undo_it() throws Exception {
        Map<Object, Object> stored = new ConcurrentHashMap<>(Map.of("mode", "ASYNC"));
        CountDownLatch refreshRead = new CountDownLatch(1);
        CountDownLatch changed = new CountDownLatch(1);
        AtomicBoolean holdNextRead = new AtomicBoolean(true);
        StringRedisTemplate redis = mock(StringRedisTemplate.class);
        HashOperations<String, Object, Object> hashes = mock(HashOperations.class);
        when(redis.<Object, Object>opsForHash()).thenReturn(hashes);
        when(hashes.entries(anyString())).thenAnswer(invocation -> {
            Map<Object, Object> read = Map.copyOf(stored);
            if (holdNextRead.compareAndSet(true, false)) {
                refreshRead.countDown();
                assertThat(changed.await(10, TimeUnit.SECONDS)).isTrue();
            }
            return read;
        });
        doAnswer(invocation -> {
                    stored.putAll(invocation.getArgument(1));
                    return null;
                })
                .when(hashes)
                .putAll(anyString(), anyMap());
        JdbcClient jdbc = mock(JdbcClient.class, RETURNS_DEEP_STUBS);
        when(jdbc.sql(anyString())
                        .param(anyString(), any())
                        .param(anyString(), any())
                        .param(anyString(), any())
                        .param(anyString(), any())
                        .query(Long.class)
                        .single())
                .thenReturn(1L);
        ModeProperties properties =
                new ModeProperties("flashsale:unit:mode", Duration.ofMillis(500), ModeSetting.ASYNC);
        ModeSwitch modes = new ModeSwitch(redis, jdbc, properties, mock(AutoPilot.class), Clock.systemUTC());

        Thread refresh = Thread.ofPlatform().start(modes::refresh);
        assertThat(refreshRead.await(10, TimeUnit.SECONDS)).isTrue();
        modes.change(ModeSetting.SYNC, "ops", "drill");
        changed.countDown();
        refresh.join(10_000);

        assertThat(stored).containsEntry("mode", "SYNC");
        assertThat(modes.setting())
                .as("the refresh read ASYNC before the change to SYNC here")
                .isEqualTo(ModeSetting.SYNC);
    }
}
