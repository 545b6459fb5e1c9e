package dev.flashsale.api.mode;

/**
 * Each path's back half, run without a shopper and leaving nothing behind, so that AUTO can measure a path
 * that no purchase took lately (a lull, or a forced mode running the other path) instead of holding stale
 * evidence or none.
 */
public interface PathRehearsal {

    /** The SYNC path's batch write, rolled back. True when it went through. */
    boolean sync() throws InterruptedException;

    /** The ASYNC path's publish, unroutable, with its confirm. True when the broker confirmed it. */
    boolean async() throws InterruptedException;
}
