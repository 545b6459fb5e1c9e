package dev.flashsale.api.mode;

import java.time.Duration;

/**
 * Arrival shapes for the {@link Simulator}, each after {@link #IDLE} seconds of silence (the instance up and
 * idle, its paths rehearsed), with Poisson arrivals around the shape's rate at each instant.
 */
enum Shape {
    /** 0 to the rate over 12 s, then 3 s at it. */
    RAMP(15),
    /** The rate for 12 s. */
    PLATEAU(12),
    /** 0 to the rate within 1 s, held 9 s: the bench's flash spike (0 to 4 × the knee) at rates up to 4 × the knee. */
    SPIKE(10),
    /** A crowd of 6 s at the rate, a lull of 8 s at a twentieth of it (at least 10/s), and the crowd again for 6 s. */
    LULL(20),
    /**
     * The rate for 40 s, on a box with noise and steal: long enough for an estimate that drifts to show (in
     * issue 39's sitting AUTO's estimate of SYNC's capacity fell from 725 to 307/s in 40 s).
     */
    STEADY(40);

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
            case RAMP -> s < 12 ? rate * s / 12 : rate;
            case PLATEAU, STEADY -> rate;
            case SPIKE -> s < 1 ? rate * s : rate;
            case LULL -> s < 6 || s >= 14 ? rate : Math.max(rate / 20, 10);
        };
    }
}
