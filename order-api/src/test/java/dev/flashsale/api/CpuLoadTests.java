package dev.flashsale.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CpuLoadTests {

    @Test
    void a_load_the_jvm_does_not_know_yet_reads_as_unknown_never_as_a_negative_load() {
        assertThat(CpuLoad.known(-1.0)).isNaN();
        assertThat(CpuLoad.known(0.0)).isZero();
        assertThat(CpuLoad.known(0.93)).isEqualTo(0.93);
    }

    @Test
    void the_box_load_is_a_share_of_all_cores_or_unknown() {
        var load = CpuLoad.ofTheBox();
        for (int i = 0; i < 3; i++) {
            double sample = load.getAsDouble();
            assertThat(Double.isNaN(sample) || (sample >= 0 && sample <= 1))
                    .as("sample %s", sample)
                    .isTrue();
        }
    }
}
