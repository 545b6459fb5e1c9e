package dev.flashsale.api;

import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Clock;
import java.time.Duration;
import org.springframework.cache.CacheManager;
import org.springframework.cache.caffeine.CaffeineCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

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
}
