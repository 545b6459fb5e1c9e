package dev.flashsale.api.mode;

import java.time.Duration;

/**
 * Arrival shapes for the {@link Simulator}, each after {@link #IDLE} seconds of silence (the instance up and
 * idle, its paths rehearsed), with Poisson arrivals around the shape's rate at each instant.
 */
enum Shape {
    /** 0 to the rate over 20 s, then 5 s at it. */
    RAMP(25),
    /** The rate for 20 s. */
    PLATEAU(20),
    /** 0 to the rate within 1 s, held 15 s: the bench's flash spike (0 to 4 × the knee) at rates up to 4 × the knee. */
    SPIKE(16),
    /** A crowd of 8 s at the rate, a lull of 10 s at a twentieth of it (at least 10/s), and the crowd again for 8 s. */
    LULL(26);

    static final long IDLE_NANOS = Duration.ofSeconds(3).toNanos();

    private final int seconds;

    Shape(int seconds) {
        this.seconds = seconds;
    }

    /** When the last arrival may come. */
    long nanos() {
        return IDLE_NANOS + Duration.ofSeconds(seconds).toNanos();
    }

    double maxRate(double rate) {
        return rate;
    }

    /** Arrivals per second at {@code t} seconds from the start, for a shape of {@code rate}. */
    double rate(double rate, double t) {
        double s = t - IDLE_NANOS / 1e9;
        if (s < 0) {
            return 0;
        }
        return switch (this) {
            case RAMP -> s < 20 ? rate * s / 20 : rate;
            case PLATEAU -> rate;
            case SPIKE -> s < 1 ? rate * s : rate;
            case LULL -> s < 8 || s >= 18 ? rate : Math.max(rate / 20, 10);
        };
    }
}
