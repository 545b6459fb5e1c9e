package dev.flashsale.api.mode;

import java.time.Duration;

/**
 * AUTO's shipped defaults (application.yml, app.mode.auto.*) for unit tests, with the dwell made adjustable.
 * {@link #DEFAULTS} tries ASYNC with a quarter of a crowd before latency moves it, as shipped; the {@code of}
 * variants move it at once (no trial) unless given a trial share.
 */
final class AutoModeLimits {

    static final AutoModeProperties DEFAULTS = of(
            3, 25, Duration.ofSeconds(5), Duration.ofSeconds(60), Duration.ofSeconds(5), Duration.ofMinutes(5), 0.25);

    private AutoModeLimits() {}

    /** The defaults, switching to ASYNC after {@code toAsync} high samples and back after {@code toSync} low ones. */
    static AutoModeProperties switchingAfter(int toAsync, int toSync) {
        return of(toAsync, toSync, Duration.ofSeconds(5), Duration.ofSeconds(60));
    }

    /** Switching after the given streaks, at most once per {@code dwell}, trusting a quiet path's last p95 for {@code evidenceTtl}. */
    static AutoModeProperties of(int toAsync, int toSync, Duration dwell, Duration evidenceTtl) {
        return of(toAsync, toSync, dwell, evidenceTtl, Duration.ofSeconds(5));
    }

    /** As {@link #of(int, int, Duration, Duration)}, probing a path no purchase took every {@code probeInterval}. */
    static AutoModeProperties of(
            int toAsync, int toSync, Duration dwell, Duration evidenceTtl, Duration probeInterval) {
        return of(toAsync, toSync, dwell, evidenceTtl, probeInterval, Duration.ofMinutes(5));
    }

    /** As {@link #of(int, int, Duration, Duration, Duration)}, trusting a lesson about ASYNC for {@code lessonTtl}. */
    static AutoModeProperties of(
            int toAsync, int toSync, Duration dwell, Duration evidenceTtl, Duration probeInterval, Duration lessonTtl) {
        return of(toAsync, toSync, dwell, evidenceTtl, probeInterval, lessonTtl, 0);
    }

    /** As {@link #of(int, int, Duration, Duration, Duration, Duration)}, trying ASYNC with {@code trialShare} of a crowd first. */
    static AutoModeProperties of(
            int toAsync,
            int toSync,
            Duration dwell,
            Duration evidenceTtl,
            Duration probeInterval,
            Duration lessonTtl,
            double trialShare) {
        return new AutoModeProperties(
                Duration.ofMillis(200),
                1.5,
                1.2,
                Duration.ofMillis(10),
                probeInterval,
                20,
                2,
                1.0,
                0.5,
                toAsync,
                toSync,
                dwell,
                50,
                evidenceTtl,
                lessonTtl,
                trialShare);
    }
}
