package dev.flashsale.common.stock;

/** A sale's counters in Redis: units never sold, units held by orders not yet final. */
public record SaleCounters(long initial, long remaining, long held) {}
