package dev.flashsale.api;

import com.github.benmanes.caffeine.cache.Caffeine;
import dev.flashsale.common.CommonConfiguration;
import java.time.Clock;
import org.springframework.boot.task.ThreadPoolTaskSchedulerBuilder;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.caffeine.CaffeineCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

@Configuration(proxyBeanMethods = false)
@Import(CommonConfiguration.class)
@EnableCaching
@EnableScheduling
class ApiConfiguration {

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    /**
     * Sale definitions are immutable (nothing updates or deletes a sale row), so a cached one never expires;
     * the size bound alone keeps the cache small. An expiry (it was a minute) made every purchase of the
     * sale wait for one reload from Postgres once a minute, since loads are shared ({@code sync = true}):
     * a stall of a round trip or more for every purchase in flight (a slow Postgres made it a p99 spike),
     * and while Postgres was down ASYNC, which otherwise needs no Postgres, failed with it.
     */
    @Bean
    CacheManager cacheManager() {
        CaffeineCacheManager caches = new CaffeineCacheManager("sales");
        caches.setCaffeine(Caffeine.newBuilder().maximumSize(10_000));
        return caches;
    }

    /**
     * Scheduled work (the mode flag's refresh, AUTO's sampler, the ops meters) on platform threads of its
     * own. With virtual threads on, Boot would run each tick as a virtual thread, queued on the same two
     * carriers behind every request of a crowd: an instance then followed a mode change 1.5 s late.
     */
    @Bean
    ThreadPoolTaskScheduler taskScheduler(ThreadPoolTaskSchedulerBuilder builder) {
        return builder.poolSize(4).threadNamePrefix("scheduling-").build();
    }
}
