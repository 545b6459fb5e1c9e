package dev.flashsale.common.stock;

import dev.flashsale.common.redis.LuaScripts;
import dev.flashsale.common.redis.ScriptCalls;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * A sale's line in Redis: the places handed out in arrival order, across every API instance, and its
 * front, the places whose units they may buy now. A place is the number of units asked for before it, so
 * the places before the front cover the units left when the line began, plus those the places ahead gave
 * up (join_line.lua, line_front.lua).
 */
@Component
public class SaleLines {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> JOIN = LuaScripts.load("join_line", List.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> FRONT = LuaScripts.load("line_front", List.class);

    private final StringRedisTemplate redis;
    private final ScriptCalls scripts;

    public SaleLines(StringRedisTemplate redis) {
        this.redis = redis;
        this.scripts = new ScriptCalls(redis);
    }

    /**
     * Whether the shopper holds or held units of the sale (the per-user totals keep a shopper at 0 once their
     * units are given back; a rebuild writes them from Postgres's orders). Only such a shopper's purchase can
     * replay an order of the sale, even one whose Idempotency-Key binding Redis lost. One command on the
     * sale's slot.
     */
    public boolean boughtBefore(long saleId, String userId) {
        return redis.opsForHash().hasKey(new SaleKeys(saleId).users(), userId);
    }

    /**
     * Every shopper who holds or held units of the sale ({@link #boughtBefore} for all of them at once), for an
     * instance that keeps them in memory: one command on the sale's slot. Read after a {@link Front}, it holds
     * at least the {@link Front#buyers} that front counted.
     */
    public Set<String> buyers(long saleId) {
        return StockReadings.buyers(redis, new SaleKeys(saleId));
    }

    /**
     * Where a sale's line stands.
     *
     * @param front the places before it are served: a place {@code p} asking {@code q} units may buy when
     *     {@code p + q <= front}
     * @param next the place the next arrival gets (the units asked for by every place so far)
     * @param roundEndMillis Redis's clock when the current round ends: the front moves on no earlier
     * @param remaining the sale's units left
     * @param held the units reservations hold (they may come back)
     * @param givenUp the units the places ahead gave up and the front moved on by, in all
     * @param buyers how many shoppers hold or held units of the sale, a version of {@link #buyers(long)}: the
     *     reserve script counts each new one and nothing but a rebuild changes the count; -1 for a sale loaded
     *     before the count existed
     */
    public record Front(
            long front, long next, long roundEndMillis, long remaining, long held, long givenUp, long buyers) {

        public boolean serves(long place, int quantity) {
            return place + quantity <= front;
        }

        /** No unit can come back: a purchase of {@code quantity} is refused SOLD_OUT, wherever its place. */
        public boolean soldOut(int quantity) {
            return remaining + held < quantity;
        }
    }

    /** A place in the line, and the line as it stood when it was handed out. */
    public record Joined(long place, Front front) {}

    /**
     * A place for {@code quantity} units; empty when the sale has no state in Redis (lost, or closed). With
     * a {@code shopper}, the place is theirs: their next join for the same quantity gets it again (an
     * attempt whose answer was lost, with the instance that gave it). Without one, a block of places.
     */
    public Optional<Joined> join(long saleId, int quantity, Duration round, @Nullable String shopper) {
        SaleKeys keys = new SaleKeys(saleId);
        List<@Nullable Object> reply = scripts.run(
                JOIN,
                List.of(keys.line(), keys.sale(), keys.lineShoppers()),
                Integer.toString(quantity),
                Long.toString(round.toMillis()),
                shopper == null ? "" : shopper);
        if (reply.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Joined(number(reply, 0), front(reply, 1)));
    }

    /** The line's front, moved on when a round has ended; empty when the sale has no line. */
    public Optional<Front> front(long saleId, Duration round) {
        SaleKeys keys = new SaleKeys(saleId);
        List<@Nullable Object> reply =
                scripts.run(FRONT, List.of(keys.line(), keys.sale()), Long.toString(round.toMillis()));
        return reply.isEmpty() ? Optional.empty() : Optional.of(front(reply, 0));
    }

    private static Front front(List<@Nullable Object> reply, int from) {
        return new Front(
                number(reply, from),
                number(reply, from + 1),
                number(reply, from + 2),
                number(reply, from + 3),
                number(reply, from + 4),
                number(reply, from + 5),
                number(reply, from + 6));
    }

    private static long number(List<@Nullable Object> reply, int index) {
        return Long.parseLong(String.valueOf(reply.get(index)));
    }
}
