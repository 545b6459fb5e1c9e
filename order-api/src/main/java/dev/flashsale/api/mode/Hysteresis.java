package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchaseMode;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * AUTO's decision rule, free of I/O: to ASYNC after {@code samplesToAsync} consecutive samples at or
 * above {@code high}; back to SYNC only after {@code samplesToSync} consecutive samples below
 * {@code low}; never two switches within {@code minTimeBetweenSwitches}. Not thread-safe: one sampler
 * thread drives it.
 */
final class Hysteresis {

    private final AutoModeProperties limits;
    private PurchaseMode mode;
    private int highStreak;
    private int lowStreak;
    private @Nullable Instant lastSwitch;

    Hysteresis(AutoModeProperties limits) {
        this(limits, PurchaseMode.SYNC);
    }

    /** Starts in {@code mode}, free to switch at once. */
    Hysteresis(AutoModeProperties limits, PurchaseMode mode) {
        this.limits = limits;
        this.mode = mode;
    }

    /** Feeds one sample; returns the new mode when this sample switched it, else null. */
    @Nullable
    PurchaseMode sample(double pressure, Instant now) {
        highStreak = pressure >= limits.high() ? highStreak + 1 : 0;
        lowStreak = pressure < limits.low() ? lowStreak + 1 : 0;
        if (lastSwitch != null && Duration.between(lastSwitch, now).compareTo(limits.minTimeBetweenSwitches()) < 0) {
            return null;
        }
        if (mode == PurchaseMode.SYNC && highStreak >= limits.samplesToAsync()) {
            return switchTo(PurchaseMode.ASYNC, now);
        }
        if (mode == PurchaseMode.ASYNC && lowStreak >= limits.samplesToSync()) {
            return switchTo(PurchaseMode.SYNC, now);
        }
        return null;
    }

    /**
     * Back to SYNC now, whatever the streaks and the dwell: ASYNC was tried and did not pay. The dwell
     * then runs from now, so ASYNC is not tried again sooner than {@code minTimeBetweenSwitches}.
     */
    PurchaseMode revert(Instant now) {
        return move(PurchaseMode.SYNC, now);
    }

    /**
     * To {@code next} now, whatever the streaks and the dwell: a trial decided. The dwell then runs from
     * now.
     */
    PurchaseMode move(PurchaseMode next, Instant now) {
        return switchTo(next, now);
    }

    PurchaseMode mode() {
        return mode;
    }

    private PurchaseMode switchTo(PurchaseMode next, Instant now) {
        mode = next;
        lastSwitch = now;
        highStreak = 0;
        lowStreak = 0;
        return next;
    }
}
