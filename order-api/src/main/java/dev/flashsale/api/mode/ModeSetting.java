package dev.flashsale.api.mode;

/** What ops asked for: a forced purchase mode, or AUTO (the API picks by measured load). */
public enum ModeSetting {
    SYNC,
    ASYNC,
    AUTO
}
