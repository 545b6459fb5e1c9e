package dev.flashsale.common.stock;

import dev.flashsale.common.redis.LuaScripts;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * A sale's state in Redis as a whole, off the purchase path: loaded once when the sale is created, its
 * counters read, and every key deleted for a throw-away sale (the API's warm-up).
 */
@Component
public class SaleStock {

    private static final RedisScript<Long> LOAD_SALE = LuaScripts.load("load_sale", Long.class);

    private final StringRedisTemplate redis;

    public SaleStock(StringRedisTemplate redis) {
        this.redis = redis;
    }

    /** Loads a new sale into Redis; false when it was loaded before (nothing changed). */
    public boolean loadSale(long saleId, int stock, int perUserLimit, Instant startsAt, Instant endsAt) {
        Long loaded = redis.execute(
                LOAD_SALE,
                List.of(new SaleKeys(saleId).sale()),
                Integer.toString(stock),
                Integer.toString(perUserLimit),
                Long.toString(startsAt.toEpochMilli()),
                Long.toString(endsAt.toEpochMilli()));
        return loaded != null && loaded == 1L;
    }

    /** The sale's counters, or empty when its hash is missing (the sale is closed). */
    public Optional<SaleCounters> counters(long saleId) {
        List<Object> values =
                redis.opsForHash().multiGet(new SaleKeys(saleId).sale(), List.of("initial", "remaining", "held"));
        if (values.getFirst() == null) {
            return Optional.empty();
        }
        return Optional.of(new SaleCounters(
                Long.parseLong((String) values.get(0)), Long.parseLong((String) values.get(1)), Long.parseLong((String)
                        values.get(2))));
    }

    /**
     * Deletes every key of a sale and the index entries of the given orders: for a throw-away sale that
     * no shopper can reach (the API's warm-up), never for a real one.
     */
    public void discard(long saleId, Collection<UUID> orderIds) {
        SaleKeys keys = new SaleKeys(saleId);
        List<String> doomed = new ArrayList<>(orderIds.size() + 7);
        doomed.add(keys.sale());
        doomed.add(keys.users());
        doomed.add(keys.pending());
        doomed.add(keys.line());
        doomed.add(keys.lineShoppers());
        doomed.add(keys.orders());
        doomed.add(keys.refusals());
        for (UUID orderId : orderIds) {
            doomed.add(SaleKeys.orderIndex(orderId));
        }
        redis.delete(doomed);
    }
}
