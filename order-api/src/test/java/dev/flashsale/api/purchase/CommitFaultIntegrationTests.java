package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.TestTopology;
import dev.flashsale.api.support.Tokens;
import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Commits that fail. SYNC commits whose outcome the API does not learn: the connection is lost on COMMIT,
 * after or before Postgres committed; and a mode change's audit that cannot be written. A transaction
 * manager of the test's own injects the fault into the next commit of a SYNC batch write.
 */
@Import(CommitFaultIntegrationTests.FaultyCommits.class)
class CommitFaultIntegrationTests extends ApiIntegrationTest {

    enum Fault {
        NONE,
        /** Postgres commits, the acknowledgement is lost. */
        ACK_LOST,
        /** The commit never reaches Postgres (it rolls back), and the API cannot tell either. */
        COMMIT_LOST,
        /** The acknowledgement is lost, and Postgres is unreachable for the look-up that follows. */
        ACK_LOST_THEN_UNREACHABLE
    }

    static final AtomicReference<Fault> FAULT = new AtomicReference<>(Fault.NONE);

    @TestConfiguration(proxyBeanMethods = false)
    static class FaultyCommits {

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new JdbcTransactionManager(dataSource) {
                private final ThreadLocal<Boolean> unreachable = ThreadLocal.withInitial(() -> false);

                @Override
                protected void doBegin(Object transaction, TransactionDefinition definition) {
                    if (unreachable.get()) {
                        unreachable.set(false);
                        throw new CannotCreateTransactionException("injected: Postgres unreachable");
                    }
                    super.doBegin(transaction, definition);
                }

                @Override
                protected void doCommit(DefaultTransactionStatus status) {
                    if (!SyncCommits.WRITE_TRANSACTION.equals(
                            TransactionSynchronizationManager.getCurrentTransactionName())) {
                        super.doCommit(status);
                        return;
                    }
                    switch (FAULT.getAndSet(Fault.NONE)) {
                        case NONE -> super.doCommit(status);
                        case ACK_LOST -> {
                            super.doCommit(status);
                            throw new TransactionSystemException("injected: connection lost after COMMIT");
                        }
                        case COMMIT_LOST -> {
                            doRollback(status);
                            throw new TransactionSystemException("injected: connection lost before COMMIT");
                        }
                        case ACK_LOST_THEN_UNREACHABLE -> {
                            super.doCommit(status);
                            unreachable.set(true);
                            throw new TransactionSystemException("injected: connection lost after COMMIT");
                        }
                    }
                }
            };
        }
    }

    @Autowired
    DataSource dataSource;

    @BeforeEach
    void syncMode() {
        closeBreakers();
        api.setMode("SYNC");
    }

    @AfterEach
    void disarm() {
        FAULT.set(Fault.NONE);
    }

    private long pgOrders(long sale) {
        return jdbc.sql("select count(*) from purchase_order where sale_id = :id")
                .param("id", sale)
                .query(Long.class)
                .single();
    }

    /** A purchase of one unit with the sale's Idempotency-Key (again: a replay), answered {@code status}. */
    private Api.Response keyed(long sale, String user, int status) {
        Api.Response response = api.purchase(sale, user, 1, "Idempotency-Key", "k-" + sale);
        assertThat(response.status()).as(response.toString()).isEqualTo(status);
        return response;
    }

    @Test
    void a_commit_whose_acknowledgement_was_lost_answers_201_from_postgres_and_holds_the_unit_once() {
        long sale = api.createSale(5, 1);
        FAULT.set(Fault.ACK_LOST);

        Api.Response first = keyed(sale, "lost-ack", 201);

        assertThat(first.text("status")).isEqualTo("CONFIRMED");
        String orderId = first.text("orderId");
        assertThat(reservationState(sale, orderId)).isEqualTo("CONFIRMED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);

        Api.Response replay = keyed(sale, "lost-ack", 201);
        assertThat(replay.text("orderId")).isEqualTo(orderId);
        assertThat(api.stock(sale).body().path("balanced").asBoolean()).isTrue();
    }

    @Test
    void a_commit_that_never_reached_postgres_releases_the_unit_and_the_key_buys_again() {
        long sale = api.createSale(5, 1);
        FAULT.set(Fault.COMMIT_LOST);

        Api.Response first = keyed(sale, "lost-commit", 503);

        assertThat(first.header("Retry-After")).isPresent();
        assertThat(redisRemaining(sale)).isEqualTo(5);
        assertThat(pgOrders(sale)).isZero();

        keyed(sale, "lost-commit", 201);
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(pgRemaining(sale)).isEqualTo(4);
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);
    }

    @Test
    void an_outcome_postgres_cannot_tell_yet_keeps_the_key_and_its_replay_finds_the_order() {
        long sale = api.createSale(5, 1);
        FAULT.set(Fault.ACK_LOST_THEN_UNREACHABLE);

        Api.Response first = keyed(sale, "unknown", 503);

        assertThat(first.header("Retry-After")).isPresent();
        assertThat(redisRemaining(sale))
                .as("the unit stays held, never sold twice")
                .isEqualTo(4);
        assertThat(pgConfirmedOrders(sale)).isEqualTo(1);

        Api.Response replay = keyed(sale, "unknown", 201);
        assertThat(replay.text("status")).isEqualTo("CONFIRMED");
        assertThat(reservationState(sale, replay.text("orderId"))).isEqualTo("CONFIRMED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(api.stock(sale).body().path("balanced").asBoolean()).isTrue();
    }

    /**
     * Defect 7: the mode flag must never change without its audit row. The audit's insert is stalled past
     * the query timeout by a lock on the audit table (it runs in auto-commit: no commit to fail).
     */
    @Test
    void a_mode_change_whose_audit_cannot_be_written_is_not_made() throws Exception {
        String reason = "audit-first-" + System.nanoTime();
        Api.Response refused;
        try (Connection auditor = dataSource.getConnection()) {
            auditor.setAutoCommit(false);
            auditor.createStatement().execute("lock table mode_change in share mode");
            refused = api.put("/api/v1/admin/mode", Tokens.admin(), Map.of("mode", "ASYNC", "reason", reason));
            auditor.rollback();
        }

        assertThat(refused.status()).as(refused.toString()).isEqualTo(503);
        long audited = jdbc.sql("select count(*) from mode_change where reason = :reason")
                .param("reason", reason)
                .query(Long.class)
                .single();
        assertThat(audited).isZero();
        Object flag = redis.opsForHash().get(TestTopology.properties().get("app.mode.redis-key"), "reason");
        assertThat(flag).as("the flag is not set by a change without its audit").isNotEqualTo(reason);
        assertThat(api.get("/api/v1/admin/mode", Tokens.admin()).text("mode")).isEqualTo("SYNC");
    }
}
