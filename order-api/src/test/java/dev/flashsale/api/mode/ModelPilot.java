package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.time.Duration;

/** {@link ModelAutoPilot} on the simulator, with its shipped defaults and the door's. */
final class ModelPilot implements SimulatedPilot {

    static final AutoModeProperties DEFAULTS = AutoModeDefaults.PROPERTIES;
    static final Factory FACTORY = ModelPilot::new;

    private final ModelAutoPilot pilot;
    private final Simulator.Instance instance;

    ModelPilot(Simulator.Instance instance) {
        this.instance = instance;
        this.pilot = new ModelAutoPilot(
                DEFAULTS,
                AutoModeDefaults.DOOR,
                instance.breakers(),
                instance.meters(),
                instance.clock(),
                new BoxCpu(instance.cpuLoad(), instance.cpuSteal(), instance.cores()));
    }

    @Override
    public PurchasePath route() {
        return pilot.recommended();
    }

    @Override
    public void arrived() {
        pilot.arrived();
    }

    @Override
    public void took(PurchasePath path, long nanos) {
        if (path == PurchasePath.SYNC) {
            pilot.syncTook(nanos);
        } else {
            pilot.asyncTook(nanos);
        }
    }

    @Override
    public void rehearsed(PurchasePath path, long nanos) {
        pilot.rehearsed(path, nanos);
    }

    @Override
    public void answered(PurchasePath path, long nanos) {
        pilot.answered(path, nanos);
    }

    @Override
    public void sample() {
        pilot.sample();
    }

    @Override
    public void engage(boolean engaged) {
        pilot.engage(engaged);
    }

    @Override
    public Duration rehearsalInterval() {
        return DEFAULTS.rehearsalInterval();
    }

    @Override
    public long switches() {
        return (long) instance.meters().find("flashsale.mode.auto.switches").counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }
}
