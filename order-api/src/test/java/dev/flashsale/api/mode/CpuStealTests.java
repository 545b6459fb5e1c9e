package dev.flashsale.api.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The steal share read from /proc/stat's first line between two readings. */
class CpuStealTests {

    @TempDir
    Path dir;

    @Test
    void reads_the_share_of_ticks_stolen_since_the_last_reading() throws IOException {
        Path stat = dir.resolve("stat");
        CpuSteal steal = new CpuSteal(stat);
        Files.writeString(stat, "cpu  100 0 100 700 0 0 0 100 0 0\ncpu0 50 0 50 350 0 0 0 50 0 0\n");
        double first = steal.getAsDouble();
        // 1,000 ticks later, 200 of them stolen (guest time is inside user time: not counted twice).
        Files.writeString(stat, "cpu  200 0 200 1300 0 0 0 300 50 0\n");

        assertThat(first).isNaN();
        assertThat(steal.getAsDouble()).isCloseTo(0.2, within(1e-9));
    }

    @Test
    void is_unknown_where_there_is_no_proc_stat() {
        CpuSteal steal = new CpuSteal(dir.resolve("absent"));

        steal.getAsDouble();

        assertThat(steal.getAsDouble()).isNaN();
    }
}
