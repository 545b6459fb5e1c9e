package dev.flashsale.common.stock;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * app.redis.*: how long reservation records and order index entries live in Redis.
 *
 * @param orderTtl life of a reservation record and of an order's index entry after its last change
 * @param refusalTtl life of a remembered refusal, which only serves replays of an Idempotency-Key: as long
 *     as the key's binding (app.purchase.idempotency-ttl), no longer, since Redis runs with noeviction
 */
@ConfigurationProperties("app.redis")
public record StockProperties(
        @DefaultValue("7d") Duration orderTtl,
        @DefaultValue("24h") Duration refusalTtl) {

    public StockProperties {
        if (orderTtl.toSeconds() < 1 || refusalTtl.toSeconds() < 1) {
            throw new IllegalArgumentException("app.redis TTLs must be at least one second");
        }
    }
}
