package dev.flashsale.api.support;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * An API test in ASYNC, every breaker closed, that switches faults on in beans: its {@code @TestConfiguration}
 * registers the {@link Faults} for the types it needs. The faults are cleared and the mode set back to SYNC
 * after each test.
 */
public abstract class AsyncFaultsIntegrationTest extends ApiIntegrationTest {

    @Autowired
    protected Faults faults;

    @BeforeEach
    void asyncWithClosedBreakers() {
        closeBreakers();
        api.setMode("ASYNC");
    }

    @AfterEach
    void heal() {
        faults.clear();
        api.setMode("SYNC");
    }
}
