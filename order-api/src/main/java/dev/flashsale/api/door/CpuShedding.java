package dev.flashsale.api.door;

import dev.flashsale.api.CpuLoad;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Sheds a share of new purchases while the CPU is saturated. The concurrency limit of the door
 * ({@link MedianLimit}) sees only the time a purchase spends inside the application; on a
 * saturated CPU the time that grows is spent before it — in the accept queue, the poller, the run queue —
 * and every request, a refusal included, waits there. So every {@code interval} the CPU load is read;
 * above {@code high} the share of purchases let in is multiplied by {@code decrease}, below {@code low} it
 * grows back by {@code increase} (AIMD). The load then settles just under saturation: the purchases let
 * in are served at the latency of an unsaturated box, and the rest are refused in milliseconds.
 */
@Component
class CpuShedding {

    private final CpuSheddingProperties settings;
    private final DoubleSupplier cpuLoad;
    private volatile double share = 1.0;
    private volatile double lastLoad = -1;

    @Autowired
    CpuShedding(CpuSheddingProperties settings, MeterRegistry meters) {
        this(settings, CpuLoad.ofTheBox(), meters);
    }

    CpuShedding(CpuSheddingProperties settings, DoubleSupplier cpuLoad, MeterRegistry meters) {
        this.settings = settings;
        this.cpuLoad = cpuLoad;
        meters.gauge("flashsale.door.cpu.share", this, CpuShedding::share);
        meters.gauge("flashsale.door.cpu.load", this, shedding -> shedding.lastLoad);
    }

    /** Whether this purchase is let in: always while the CPU has room, else with the current share. */
    boolean admits() {
        double current = share;
        return current >= 1.0 || ThreadLocalRandom.current().nextDouble() < current;
    }

    double share() {
        return share;
    }

    @Scheduled(fixedRateString = "${app.door.cpu.interval:200ms}")
    void sample() {
        if (!settings.enabled()) {
            return;
        }
        double load = cpuLoad.getAsDouble();
        lastLoad = load;
        if (load < 0 || Double.isNaN(load)) {
            share = 1.0; // not measurable here: never shed on a guess
        } else if (load > settings.high()) {
            share = Math.max(settings.minShare(), share * settings.decrease());
        } else if (load < settings.low()) {
            share = Math.min(1.0, share + settings.increase());
        }
    }
}
