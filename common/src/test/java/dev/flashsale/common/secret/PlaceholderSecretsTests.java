package dev.flashsale.common.secret;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

class PlaceholderSecretsTests {

    @Test
    void refuses_to_start_with_the_committed_redis_password_outside_the_local_profile() {
        MockEnvironment production = new MockEnvironment()
                .withProperty("spring.data.redis.password", "change-me")
                .withProperty("spring.profiles.active", "redis-sentinel");
        production.setActiveProfiles("redis-sentinel");

        assertThatThrownBy(() -> new PlaceholderSecrets(production))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("spring.data.redis.password is a committed placeholder")
                .hasMessageContaining("Set REDIS_PASSWORD");
    }

    @Test
    void starts_with_it_in_the_local_profile_with_a_real_one_anywhere_and_with_none() {
        MockEnvironment local = new MockEnvironment().withProperty("spring.data.redis.password", "change-me");
        local.setActiveProfiles("local");

        assertThatCode(() -> new PlaceholderSecrets(local)).doesNotThrowAnyException();
        assertThatCode(() -> new PlaceholderSecrets(
                        new MockEnvironment().withProperty("spring.data.redis.password", "s3cr3t-from-the-vault")))
                .doesNotThrowAnyException();
        assertThatCode(() -> new PlaceholderSecrets(new MockEnvironment())).doesNotThrowAnyException();
    }
}
