package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class CpuSheddingTests {

    private final AtomicReference<Double> load = new AtomicReference<>(0.5);

    private CpuShedding shedding(boolean enabled, double minShare) {
        return new CpuShedding(
                new CpuSheddingProperties(enabled, 0.9, 0.8, Duration.ofMillis(200), 0.5, 0.25, minShare),
                load::get,
                new SimpleMeterRegistry());
    }

    private static long admitted(CpuShedding shedding, int of) {
        return IntStream.range(0, of).filter(i -> shedding.admits()).count();
    }

    @Test
    void everything_gets_in_while_the_cpu_has_room() {
        CpuShedding shedding = shedding(true, 0.05);
        load.set(0.85); // between low and high: no change either way
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(1.0);
        assertThat(admitted(shedding, 1000)).isEqualTo(1000);
    }

    @Test
    void a_saturated_cpu_cuts_the_share_down_to_its_floor_and_room_grows_it_back() {
        CpuShedding shedding = shedding(true, 0.1);
        load.set(0.97);
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(0.5);
        assertThat(admitted(shedding, 10_000)).isBetween(4_500L, 5_500L);
        shedding.sample();
        shedding.sample();
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(0.1); // 0.0625 would be below the floor

        load.set(0.85); // in the band: held
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(0.1);

        load.set(0.5);
        shedding.sample();
        assertThat(shedding.share()).isCloseTo(0.35, within(1e-9));
        shedding.sample();
        shedding.sample();
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(1.0);
        assertThat(admitted(shedding, 1000)).isEqualTo(1000);
    }

    @Test
    void an_unknown_load_never_sheds() {
        CpuShedding shedding = shedding(true, 0.0);
        load.set(0.99);
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(0.5);
        load.set(-1.0);
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(1.0);
    }

    @Test
    void disabled_it_admits_everything_whatever_the_load() {
        CpuShedding shedding = shedding(false, 0.0);
        load.set(1.0);
        shedding.sample();
        shedding.sample();
        assertThat(shedding.share()).isEqualTo(1.0);
        assertThat(admitted(shedding, 1000)).isEqualTo(1000);
    }
}
