package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Cache;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import dev.flashsale.api.support.Faults;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.cache.CacheManager;
import org.springframework.cache.caffeine.CaffeineCache;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.test.context.TestPropertySource;

/**
 * A sale's definition never changes, so once read it is never read again: a reload would hold every
 * purchase of the sale for a Postgres round trip (with {@code sync = true} they all wait for it), and an
 * ASYNC purchase must not need Postgres at all.
 *
 * <p>The conservation check reads every recent open sale on its own thread (this one too, through the
 * catalogue): here it runs once at start-up, so the test sees only the reads its purchase makes.
 */
@TestPropertySource(properties = "app.ops.conservation-check-interval=1h")
class SaleCacheIntegrationTests extends ApiIntegrationTest {

    /** Other threads may read sales (a rebuild), so the repository's fault is switched, not stubbed. */
    @TestConfiguration
    static class PostgresFaults {

        @Bean
        static Faults faults() {
            return new Faults(SaleRepository.class);
        }
    }

    @Autowired
    Faults faults;

    @Autowired
    CacheManager caches;

    @AfterEach
    void heal() {
        faults.clear();
        api.setMode("SYNC");
    }

    @Test
    void a_sale_keeps_selling_in_async_while_postgres_cannot_be_read_however_long_it_was_cached() {
        api.setMode("ASYNC");
        long sale = api.createSale(5, 1);
        // Time passes: whatever expiry the cache may have had (it was a minute), the sale is older than it.
        Cache<Object, Object> cached = ((CaffeineCache) caches.getCache("sales")).getNativeCache();
        cached.policy().expireAfterWrite().ifPresent(expiry -> expiry.setExpiresAfter(Duration.ofNanos(1)));
        cached.policy().expireAfterAccess().ifPresent(expiry -> expiry.setExpiresAfter(Duration.ofNanos(1)));
        Set<Long> read = ConcurrentHashMap.newKeySet();
        faults.inject(SaleRepository.class, repository -> repository.find(0), call -> {
            read.add(call.getArgument(0));
            throw new CannotGetJdbcConnectionException("injected: Postgres down");
        });

        Api.Response accepted = api.purchase(sale, "cached-" + sale, 1);

        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        assertThat(accepted.text("status")).isEqualTo("QUEUED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
        assertThat(read).as("sales read from Postgres").doesNotContain(sale);
        // The fault is in place: a sale that is not cached (none has this id) is read from Postgres.
        long uncached = Long.MAX_VALUE - sale;
        api.get("/api/v1/sales/" + uncached, null);
        assertThat(read).as("sales read from Postgres").contains(uncached);
    }
}
