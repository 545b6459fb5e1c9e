package dev.flashsale.common.stock;

import dev.flashsale.common.redis.LuaScripts;
import dev.flashsale.common.redis.RedisBytes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The reconciler's view of each sale's pending set: the reservations still holding stock (RESERVED,
 * PUBLISHED, CLAIMED, WRITING), with their ages. Ages are measured by Redis's own clock on both ends, so
 * API and worker hosts' clocks never meet.
 */
@Component
public class PendingReservations {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> PENDING = LuaScripts.load("pending", List.class);

    private final StringRedisTemplate redis;

    public PendingReservations(StringRedisTemplate redis) {
        this.redis = redis;
    }

    /**
     * A reservation that still holds stock, how long ago it was reserved (or last claimed), and its score:
     * that moment on Redis's clock, which a claim moves.
     */
    public record Pending(UUID orderId, Duration age, long since) {}

    /**
     * The sale's pending reservations made (a CLAIMED one: last claimed) at least {@code minAge} ago,
     * oldest first, {@code limit} of them after skipping {@code offset}.
     */
    public List<Pending> olderThan(long saleId, Duration minAge, int offset, int limit) {
        List<String> result = LuaScripts.run(
                redis,
                PENDING,
                List.of(new SaleKeys(saleId).pending()),
                Long.toString(minAge.toMillis()),
                Integer.toString(offset),
                Integer.toString(limit));
        long now = Long.parseLong(result.getFirst());
        List<Pending> pending = new ArrayList<>((result.size() - 1) / 2);
        for (int i = 1; i + 1 < result.size(); i += 2) {
            long reservedAt = (long) Double.parseDouble(result.get(i + 1));
            pending.add(new Pending(
                    UUID.fromString(result.get(i)), Duration.ofMillis(Math.max(0, now - reservedAt)), reservedAt));
        }
        return pending;
    }

    /**
     * The reservation's score in the sale's pending set now ({@link Pending#since}): moved on from what a page
     * read when a worker claimed it or the reconciler published it meanwhile; null when it left the set.
     */
    public @Nullable Long since(long saleId, UUID orderId) {
        Double score = redis.opsForZSet().score(new SaleKeys(saleId).pending(), orderId.toString());
        return score == null ? null : score.longValue();
    }

    /**
     * The sales among {@code saleIds} with at least one pending reservation, in one pipelined round trip:
     * the reconciler visits only these, instead of one script call per recent sale.
     */
    public List<Long> salesWithAny(List<Long> saleIds) {
        if (saleIds.isEmpty()) {
            return List.of();
        }
        List<Object> sizes = redis.executePipelined((RedisCallback<Object>) connection -> {
            for (long saleId : saleIds) {
                connection.zSetCommands().zCard(RedisBytes.of(new SaleKeys(saleId).pending()));
            }
            return null;
        });
        List<Long> withAny = new ArrayList<>();
        for (int i = 0; i < saleIds.size(); i++) {
            if (sizes.get(i) instanceof Long size && size > 0) {
                withAny.add(saleIds.get(i));
            }
        }
        return withAny;
    }
}
