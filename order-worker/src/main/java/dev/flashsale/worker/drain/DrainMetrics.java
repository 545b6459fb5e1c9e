package dev.flashsale.worker.drain;

import dev.flashsale.worker.PostgresTimeouts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.stereotype.Component;

/** What the drain counts; registered up front so that every series exists from the start, at zero. */
@Component
class DrainMetrics {

    enum Outcome {
        /** This worker wrote the order and took its units. */
        CONFIRMED,
        /** Postgres refused the order; its reservation was released. */
        REJECTED,
        /** Someone wrote or settled it before: a redelivery or a second copy. */
        DUPLICATE,
        /** The API gave the reservation up before anyone was told the order exists. */
        DROPPED,
        /** The retry budget is spent or the order cannot be written: FAILED and dead-lettered. */
        FAILED
    }

    enum DeadLetterReason {
        POISON,
        EXHAUSTED
    }

    private final Map<Outcome, Counter> orders;
    private final Map<DeadLetterReason, Counter> deadLettered;
    private final Counter retries;
    private final Timer batchWrite;
    private final Counter postgresTimeouts;

    DrainMetrics(MeterRegistry registry) {
        orders = byValue(
                Outcome.class,
                "flashsale.worker.orders",
                "Orders taken off the queue, by outcome",
                "outcome",
                registry);
        deadLettered = byValue(
                DeadLetterReason.class,
                "flashsale.worker.dead.lettered",
                "Messages sent to the dead-letter queue, by reason",
                "reason",
                registry);
        retries = Counter.builder("flashsale.worker.retries")
                .description("Orders sent through the retry queue")
                .register(registry);
        batchWrite = Timer.builder("flashsale.worker.batch.write")
                .description("One transaction writing a whole batch of orders")
                .register(registry);
        postgresTimeouts = Counter.builder(PostgresTimeouts.METER)
                .description("Postgres waits cut short by the lock or statement timeout (a row lock held open)")
                .tag("in", "drain")
                .register(registry);
    }

    void postgresTimeout() {
        postgresTimeouts.increment();
    }

    void order(Outcome outcome) {
        orders.get(outcome).increment();
    }

    void deadLettered(DeadLetterReason reason) {
        deadLettered.get(reason).increment();
    }

    void retried() {
        retries.increment();
    }

    <T> T timeBatchWrite(Supplier<T> write) {
        return batchWrite.record(write);
    }

    /** One counter per value of an enum, tagged with the value's name in lower case. */
    private static <E extends Enum<E>> Map<E, Counter> byValue(
            Class<E> type, String name, String description, String tag, MeterRegistry registry) {
        Map<E, Counter> counters = new EnumMap<>(type);
        for (E value : type.getEnumConstants()) {
            counters.put(
                    value,
                    Counter.builder(name)
                            .description(description)
                            .tag(tag, tag(value))
                            .register(registry));
        }
        return counters;
    }

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
