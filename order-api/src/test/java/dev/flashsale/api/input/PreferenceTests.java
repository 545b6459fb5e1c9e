package dev.flashsale.api.input;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PreferenceTests {

    @Test
    void reads_respond_async_and_wait_from_one_or_several_headers() {
        assertThat(Preference.parse(List.of("respond-async, wait=10")))
                .isEqualTo(new Preference(true, Duration.ofSeconds(10)));
        assertThat(Preference.parse(List.of("wait=3", "Respond-Async")))
                .isEqualTo(new Preference(true, Duration.ofSeconds(3)));
    }

    @Test
    void ignores_what_it_does_not_understand() {
        assertThat(Preference.parse(List.of("return=minimal, wait=soon"))).isEqualTo(Preference.NONE);
        assertThat(Preference.parse(null)).isEqualTo(Preference.NONE);
    }
}
