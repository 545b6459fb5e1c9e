package dev.flashsale.common.stock;

import dev.flashsale.common.redis.RedisBytes;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * Reads, without changing anything, what an API instance needs to answer refusals of a sold-out sale
 * from memory: how many units are left, whether the sale is frozen for a rebuild, and who holds or held
 * units of it (their replays must reach Redis). Never on the purchase path: an instance reads a sale it
 * believes sold out a few times a second (app.known-refusals.refresh).
 */
@Component
public class StockReadings {

    private static final byte[] REMAINING = RedisBytes.of("remaining");
    private static final byte[] FROZEN_UNTIL = RedisBytes.of("frozenUntil");
    private static final byte[] BUYERS = RedisBytes.of("buyers");
    private static final byte[] HELD = RedisBytes.of("held");

    private final StringRedisTemplate redis;

    public StockReadings(StringRedisTemplate redis) {
        this.redis = redis;
    }

    /**
     * What the sale has left, in one command (HMGET of the sale's remaining, frozenUntil, buyers and held); the
     * shoppers with an order in the sale (HKEYS, a second round trip) only when their count differs from
     * {@code knownBuyers} and is at most {@code maxBuyers}.
     *
     * <p>The count is a version: the reserve script counts each shopper it adds to the per-user totals and
     * nothing removes one (the release keeps a shopper at 0), except a rebuild, which rewrites them all and
     * sets the count. A sale loaded before the count existed has none: its totals are counted (HLEN)
     * instead. The list is read after the count, so it holds at least the shoppers counted.
     */
    public StockReading read(long saleId, long knownBuyers, int maxBuyers) {
        SaleKeys keys = new SaleKeys(saleId);
        List<byte[]> fields = redis.execute((RedisCallback<List<byte[]>>) connection ->
                connection.hashCommands().hMGet(RedisBytes.of(keys.sale()), REMAINING, FROZEN_UNTIL, BUYERS, HELD));
        Long remaining = number(fields == null ? null : fields.get(0));
        Long frozenUntil = number(fields == null ? null : fields.get(1));
        Long counted = number(fields == null ? null : fields.get(2));
        Long held = number(fields == null ? null : fields.get(3));
        long buyers = counted != null ? counted : redis.opsForHash().size(keys.users());
        Set<String> shoppers = null;
        if (remaining != null && buyers != knownBuyers && buyers <= maxBuyers) {
            shoppers = buyers(redis, keys);
        }
        return new StockReading(remaining, held == null ? 0 : held, frozenUntil, buyers, shoppers);
    }

    /** Every shopper in the sale's per-user totals: one HKEYS on its slot (also {@link SaleLines#buyers}). */
    static Set<String> buyers(StringRedisTemplate redis, SaleKeys keys) {
        return Set.copyOf(redis.<String, String>opsForHash().keys(keys.users()));
    }

    private static @Nullable Long number(byte @Nullable [] value) {
        return value == null ? null : Long.valueOf(new String(value, StandardCharsets.UTF_8));
    }

    /**
     * One reading of a sale.
     *
     * @param remaining units left, or null when Redis has no state for the sale (lost, or closed)
     * @param held units reservations hold: they may come back, so the sale is not sold out while any are
     * @param frozenUntil Redis's clock in ms until which a rebuild freezes the sale, or null
     * @param buyerCount how many shoppers hold or held units (the version of {@code buyers})
     * @param buyers those shoppers, or null when they were not read (unchanged, or more than asked for)
     */
    public record StockReading(
            @Nullable Long remaining,
            long held,
            @Nullable Long frozenUntil,
            long buyerCount,
            @Nullable Set<String> buyers) {}
}
