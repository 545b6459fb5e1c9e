package dev.flashsale.api.ops;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.management.ManagementFactory;
import jdk.management.VirtualThreadSchedulerMXBean;
import org.springframework.stereotype.Component;

/**
 * The virtual-thread scheduler's backlog: requests and continuations waiting for a carrier. Every request
 * runs on a virtual thread, and a purchase wakes several times (door, reserve, commit), each time behind
 * whatever is queued; a deep queue is the box saturated, and what a purchase's answer waits for.
 */
@Component
class VirtualThreadMeters implements MeterBinder {

    @Override
    public void bindTo(MeterRegistry meters) {
        VirtualThreadSchedulerMXBean scheduler =
                ManagementFactory.getPlatformMXBean(VirtualThreadSchedulerMXBean.class);
        Gauge.builder(
                        "jvm.threads.virtual.queued",
                        scheduler,
                        VirtualThreadSchedulerMXBean::getQueuedVirtualThreadCount)
                .description("Virtual threads queued to start or continue, waiting for a carrier (an estimate)")
                .register(meters);
        Gauge.builder(
                        "jvm.threads.virtual.mounted",
                        scheduler,
                        VirtualThreadSchedulerMXBean::getMountedVirtualThreadCount)
                .description("Virtual threads running on a carrier now (an estimate)")
                .register(meters);
    }
}
