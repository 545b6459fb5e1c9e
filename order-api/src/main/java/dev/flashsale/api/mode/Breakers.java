package dev.flashsale.api.mode;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/** The one reading of a path's circuit breaker: both paths and AUTO's measurements share it. */
public final class Breakers {

    private Breakers() {}

    /** Open, by its failures or forced: the path is not called at all. Half-open lets its probes through. */
    public static boolean open(CircuitBreaker breaker) {
        CircuitBreaker.State state = breaker.getState();
        return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
    }
}
