package dev.flashsale.api.mode;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** The flag as stored in Redis: the setting, and who changed it when and why. */
record ModeFlag(ModeSetting mode, @Nullable Instant changedAt, String changedBy, String reason) {}
