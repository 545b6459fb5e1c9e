package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.RETURNS_DEEP_STUBS;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
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
}
