package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchaseMode;
import java.time.Duration;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/** PressureAutoPilot (the controller before issue 26) on the simulator, with its shipped defaults. */
final class TodaysPilot implements SimulatedPilot {

    static final Factory FACTORY = TodaysPilot::new;

    private final PressureAutoPilot pilot;
    private final Simulator.Instance instance;

    TodaysPilot(Simulator.Instance instance) {
        this.instance = instance;
        this.pilot = new PressureAutoPilot(
                AutoModeLimits.DEFAULTS,
                instance.bulkheads(),
                instance.breakers(),
                new SimpleDriverDataSource(),
                instance.meters(),
                instance.clock(),
                new PathRehearsal() {
                    // The simulator rehearses a quiet path itself and reports it below, on its clock.
                    @Override
                    public boolean sync() {
                        return false;
                    }

                    @Override
                    public boolean async() {
                        return false;
                    }
                });
    }

    @Override
    public PurchaseMode route() {
        return pilot.route();
    }

    @Override
    public void arrived() {
        pilot.arrived();
    }

    @Override
    public void took(PurchaseMode path, long nanos) {
        if (path == PurchaseMode.SYNC) {
            pilot.syncTook(nanos);
        } else {
            pilot.asyncTook(nanos);
        }
    }

    @Override
    public void rehearsed(PurchaseMode path, long nanos) {
        took(path, nanos);
    }

    @Override
    public void answered(PurchaseMode path, long nanos) {
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
        return AutoModeLimits.DEFAULTS.probeInterval();
    }

    @Override
    public long switches() {
        return (long) instance.meters().find("flashsale.mode.auto.switches").counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }
}
