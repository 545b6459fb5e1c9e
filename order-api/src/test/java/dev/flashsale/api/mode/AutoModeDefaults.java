package dev.flashsale.api.mode;

import dev.flashsale.api.door.DoorProperties;
import java.time.Duration;

/** AUTO's and the door's shipped defaults (application.yml) for unit tests and the simulator. */
final class AutoModeDefaults {

    static final AutoModeProperties PROPERTIES = new AutoModeProperties(
            Duration.ofMillis(200),
            Duration.ofSeconds(1),
            Duration.ofSeconds(60),
            20,
            0.85,
            Duration.ofNanos(930_000),
            Duration.ofNanos(1_240_000),
            Duration.ofNanos(130_000),
            Duration.ofMillis(35),
            Duration.ofMillis(10),
            0.1,
            0.3,
            5,
            10,
            Duration.ofSeconds(3));

    static final DoorProperties DOOR = new DoorProperties(
            true,
            DoorProperties.Algorithm.STANDING_QUEUE,
            Duration.ofMillis(20),
            Duration.ofMillis(100),
            32,
            1024,
            Duration.ofSeconds(1));

    private AutoModeDefaults() {}
}
