package dev.flashsale.api.sale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.reset;
import static org.mockito.Mockito.verify;

import com.github.benmanes.caffeine.cache.Cache;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.ApiIntegrationTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cache.CacheManager;
import org.springframework.cache.caffeine.CaffeineCache;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;

/**
 * A sale's definition never changes, so once read it is never read again: a reload would hold every
 * purchase of the sale for a Postgres round trip (with {@code sync = true} they all wait for it), and an
 * ASYNC purchase must not need Postgres at all.
 */
class SaleCacheIntegrationTests extends ApiIntegrationTest {

    @MockitoSpyBean
    SaleRepository sales;

    @Autowired
    CacheManager caches;

    @AfterEach
    void heal() {
        reset(sales);
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
        clearInvocations(sales);
        doThrow(new CannotGetJdbcConnectionException("injected: Postgres down"))
                .when(sales)
                .find(anyLong());

        Api.Response accepted = api.purchase(sale, "cached-" + sale, 1);

        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        assertThat(accepted.text("status")).isEqualTo("QUEUED");
        assertThat(redisRemaining(sale)).isEqualTo(4);
        // (Other sales may be read meanwhile: this context's rebuild watcher follows every sale in Redis.)
        verify(sales, never()).find(sale);
    }
}
