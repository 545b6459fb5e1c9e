package dev.flashsale.worker;

import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.OrderStore;
import dev.flashsale.common.order.PurchasePath;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The worker's order store with a fault switch on its batch write: while a fault is on, {@code placeAll}
 * throws it (every call, or the next few). Other threads call the store while a test runs (the drain's listener, the
 * reconciler), so the fault is switched here, not stubbed on a shared Mockito spy: a call from another
 * thread between {@code doThrow(..).when(spy)} and the stubbed method takes the stub, and the test fails
 * with {@code UnfinishedStubbingException} (order-api's tests met it; their switch is its {@code Faults}).
 *
 * <p>A test class imports it ({@code @Import(FailingWrites.Store.class)}): the store then replaces the
 * application's for the drain and the reconciler, in that class's context only. Not final: it inherits
 * {@code @Repository}, and so the exception translation proxy, a subclass.
 */
public class FailingWrites extends OrderStore {

    private volatile RuntimeException fault;
    private final AtomicInteger failuresLeft = new AtomicInteger();
    private final AtomicInteger failedWrites = new AtomicInteger();

    FailingWrites(JdbcClient jdbc, OrderLookup lookup) {
        super(jdbc, lookup);
    }

    /** From now on every batch write throws {@code fault}. */
    public void failWith(RuntimeException fault) {
        failNext(Integer.MAX_VALUE, fault);
    }

    /** The next {@code writes} batch writes throw {@code fault}; those after reach Postgres. */
    public void failNext(int writes, RuntimeException fault) {
        failedWrites.set(0);
        failuresLeft.set(writes);
        this.fault = fault;
    }

    /** Batch writes reach Postgres again. */
    public void heal() {
        fault = null;
    }

    /** The batch writes that threw the fault since it was switched on. */
    public int failedWrites() {
        return failedWrites.get();
    }

    @Override
    public List<Placement> placeAll(List<OrderRequested> orders, PurchasePath mode) {
        RuntimeException current = fault;
        if (current != null && failuresLeft.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
            failedWrites.incrementAndGet();
            throw current;
        }
        return super.placeAll(orders, mode);
    }

    @TestConfiguration(proxyBeanMethods = false)
    public static class Store {

        @Bean
        @Primary
        FailingWrites failingWrites(JdbcClient jdbc, OrderLookup lookup) {
            return new FailingWrites(jdbc, lookup);
        }
    }
}
