package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.time.Duration;

/**
 * A controller under simulation, seen as the instance sees it: the purchase paths' calls, the sampler's
 * tick and the rehearsals of a path no purchase took. {@link Factory} builds one on a simulated instance.
 */
interface SimulatedPilot {

    PurchasePath route();

    void arrived();

    /** A purchase's back half on {@code path} (the round trip and its wait for a round, the linger apart). */
    void took(PurchasePath path, long nanos);

    /** A rehearsal of {@code path} without a shopper took this long. */
    void rehearsed(PurchasePath path, long nanos);

    void answered(PurchasePath path, long nanos);

    void sample();

    void engage(boolean engaged);

    /** How long a path may take no purchase before it is rehearsed. */
    Duration rehearsalInterval();

    long switches();

    @FunctionalInterface
    interface Factory {
        SimulatedPilot create(Simulator.Instance instance);
    }
}
