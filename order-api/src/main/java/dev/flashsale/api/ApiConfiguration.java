package dev.flashsale.api;

import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Clock;
import java.time.Duration;
import org.springframework.boot.task.ThreadPoolTaskSchedulerBuilder;
import org.springframework.cache.CacheManager;
import org.springframework.cache.caffeine.CaffeineCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

@Configuration(proxyBeanMethods = false)
class ApiConfiguration {

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    /** Sale definitions are immutable; a short expiry still lets a deleted test sale disappear. */
    @Bean
    CacheManager cacheManager() {
        CaffeineCacheManager caches = new CaffeineCacheManager("sales");
        caches.setCaffeine(Caffeine.newBuilder().maximumSize(10_000).expireAfterWrite(Duration.ofMinutes(1)));
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
