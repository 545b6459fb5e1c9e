package dev.flashsale.worker;

import dev.flashsale.common.order.OrderLookup;
import dev.flashsale.common.stock.StockLedger;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A worker against the real local services, on a queue topology of its own ({@link IsolatedTopology}), with
 * the {@link Shop} that sets sales and orders up. The scheduled reconciler is pushed out of the way: it would
 * reconcile every sale in the shared database, other people's too; reconciler tests reconcile their own sale.
 */
@SpringBootTest(
        classes = OrderWorkerApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"app.reconciler.interval=1h"})
@Import(WorkerTestConfiguration.class)
@DirtiesContext
public abstract class WorkerIntegrationTest {

    @Autowired
    protected Shop shop;

    @Autowired
    protected StockLedger ledger;

    /** Postgres's orders, as order-api's status look-up reads them. */
    @Autowired
    protected OrderLookup lookup;

    @DynamicPropertySource
    static void isolatedTopology(DynamicPropertyRegistry registry) {
        IsolatedTopology.register(registry);
    }
}
