package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderRequested;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.stock.ReserveRequest;
import dev.flashsale.common.stock.ReserveResult;
import dev.flashsale.common.stock.StockLedger;
import dev.flashsale.common.stock.StockProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

class ReserveGroupsTests {

    /** A ledger that notes each call, holds the first one until released, and fails every call of sale 2. */
    private static final class NotingLedger extends StockLedger {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch firstCall = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        NotingLedger() {
            super(new StringRedisTemplate(), new StockProperties(Duration.ofMinutes(1), Duration.ofMinutes(1)));
        }

        @Override
        public List<ReserveResult> reserveAll(long saleId, List<ReserveRequest> requests) {
            calls.add(
                    saleId + ":" + requests.stream().map(ReserveRequest::userId).collect(Collectors.joining(",")));
            if (firstCall.getCount() > 0) {
                firstCall.countDown();
                await(release);
            }
            if (saleId == 2) {
                throw new IllegalStateException("Redis failed sale 2's call");
            }
            return IntStream.range(0, requests.size())
                    .mapToObj(i -> (ReserveResult) new ReserveResult.Reserved(100 - i, 0))
                    .toList();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(5, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static PurchaseProperties oneCommitter() {
        GroupCommitProperties path = new GroupCommitProperties(
                4, 100, Duration.ofMillis(20), Duration.ofMillis(100), 2000, Duration.ZERO, Duration.ofSeconds(10));
        GroupCommitProperties reserve = new GroupCommitProperties(
                1, 64, Duration.ofMillis(20), Duration.ofMillis(100), 2000, Duration.ZERO, Duration.ofSeconds(10));
        return new PurchaseProperties(
                Duration.ofSeconds(5),
                Duration.ofSeconds(5),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                Duration.ofHours(24),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                path,
                path,
                reserve);
    }

    private static OrderRequested order(long saleId, String user) {
        return new OrderRequested(OrderIds.next(), saleId, user, 1, Instant.now(), null, null);
    }

    @Test
    void what_queued_meanwhile_goes_in_one_call_per_sale_in_arrival_order_and_a_failed_call_fails_only_its_sale()
            throws Exception {
        NotingLedger ledger = new NotingLedger();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ReserveGroups groups = new ReserveGroups(ledger, oneCommitter(), meters);
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            CompletableFuture<ReserveResult> first =
                    CompletableFuture.supplyAsync(() -> groups.reserve(order(1, "first"), PurchasePath.SYNC), threads);
            ledger.firstCall.await(5, TimeUnit.SECONDS);
            // The one round is held by the first call: the next three queue, in this order.
            List<CompletableFuture<ReserveResult>> queued = new ArrayList<>();
            for (OrderRequested order : List.of(order(1, "a"), order(2, "b"), order(1, "c"))) {
                queued.add(CompletableFuture.supplyAsync(() -> groups.reserve(order, PurchasePath.ASYNC), threads));
                Thread.sleep(50);
            }
            ledger.release.countDown();

            assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(new ReserveResult.Reserved(100, 0));
            assertThat(queued.get(0).get(5, TimeUnit.SECONDS)).isEqualTo(new ReserveResult.Reserved(100, 0));
            assertThat(queued.get(2).get(5, TimeUnit.SECONDS)).isEqualTo(new ReserveResult.Reserved(99, 0));
            assertThatThrownBy(() -> queued.get(1).join()).hasRootCauseMessage("Redis failed sale 2's call");
        } finally {
            groups.destroy();
        }
        assertThat(ledger.calls).containsExactly("1:first", "1:a,c", "2:b");
        assertThat(meters.get("flashsale.purchase.group.size")
                        .tag("path", "reserve")
                        .summary()
                        .max())
                .isEqualTo(3);
    }
}
