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

    private final Map<Outcome, Counter> orders = new EnumMap<>(Outcome.class);
    private final Map<DeadLetterReason, Counter> deadLettered = new EnumMap<>(DeadLetterReason.class);
    private final Counter retries;
    private final Timer batchWrite;
    private final Counter postgresTimeouts;

    DrainMetrics(MeterRegistry registry) {
        for (Outcome outcome : Outcome.values()) {
            orders.put(
                    outcome,
                    Counter.builder("flashsale.worker.orders")
                            .description("Orders taken off the queue, by outcome")
                            .tag("outcome", tag(outcome))
                            .register(registry));
        }
        for (DeadLetterReason reason : DeadLetterReason.values()) {
            deadLettered.put(
                    reason,
                    Counter.builder("flashsale.worker.dead.lettered")
                            .description("Messages sent to the dead-letter queue, by reason")
                            .tag("reason", tag(reason))
                            .register(registry));
        }
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

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
