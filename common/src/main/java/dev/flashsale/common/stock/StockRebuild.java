package dev.flashsale.common.stock;

import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.redis.LuaScripts;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.springframework.data.redis.core.HashOperations;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Rebuilds a sale's Redis state from Postgres after Redis lost it (or drifted): freeze the sale, list the
 * reservation records Redis still has, then rewrite the sale in one script. Never on the purchase path.
 */
@Component
public class StockRebuild {

    private static final RedisScript<Long> FREEZE_SALE = LuaScripts.load("freeze_sale", Long.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> REBUILD_SALE = LuaScripts.load("rebuild_sale", List.class);

    private final StringRedisTemplate redis;
    private final String recordTtlSeconds;

    public StockRebuild(StringRedisTemplate redis, StockProperties properties) {
        this.redis = redis;
        this.recordTtlSeconds = Long.toString(properties.orderTtl().toSeconds());
    }

    /**
     * Refuses reservations of the sale (REBUILDING) for {@code lease}, or until a rebuild ends first;
     * returns the freeze's token, which {@link #rebuild} must present.
     */
    public String freeze(long saleId, Duration lease) {
        String token = UUID.randomUUID().toString();
        redis.execute(FREEZE_SALE, List.of(new SaleKeys(saleId).sale()), Long.toString(lease.toMillis()), token);
        return token;
    }

    /**
     * Rewrites the sale's state from what Postgres holds ({@code stored}: every order of the sale) and
     * the reservation records Redis still has ({@code recorded}, read by {@link #reservationRecords} under
     * the freeze): remaining = stock - confirmed - held by records of orders Postgres does not have yet.
     * Reservations stay refused for {@code freeze} afterwards, so that orders reserved before the loss and
     * still in flight land in Postgres first. Call it with the sale's stock rows locked in Postgres. Empty,
     * and nothing written, when the freeze of {@code freezeToken} ran out (or another rebuild's replaced it):
     * reservations taken since then are missing from {@code recorded}.
     */
    public Optional<SaleCounters> rebuild(
            long saleId,
            String freezeToken,
            int stock,
            int perUserLimit,
            Instant startsAt,
            Instant endsAt,
            Duration freeze,
            List<UUID> recorded,
            List<StoredOrder> stored) {
        SaleKeys keys = new SaleKeys(saleId);
        List<StoredOrder> finals =
                stored.stream().filter(order -> order.status().isFinal()).toList();
        Map<String, Integer> confirmedByUser = new LinkedHashMap<>();
        long confirmed = 0;
        for (StoredOrder order : stored) {
            // Every shopper with an order keeps a place in the per-user totals, at 0 when none is
            // confirmed (StockReadings: who must reach Redis once the sale is sold out).
            boolean counts = order.status() == OrderStatus.CONFIRMED;
            confirmedByUser.merge(order.userId(), counts ? order.quantity() : 0, Integer::sum);
            confirmed += counts ? order.quantity() : 0;
        }
        Set<UUID> inPostgres = new HashSet<>();
        stored.forEach(order -> inPostgres.add(order.orderId()));
        List<String> scriptKeys = List.of(keys.sale(), keys.users(), keys.pending(), keys.orders());
        List<String> args = new ArrayList<>(List.of(
                Integer.toString(stock),
                Integer.toString(perUserLimit),
                Long.toString(startsAt.toEpochMilli()),
                Long.toString(endsAt.toEpochMilli()),
                Long.toString(freeze.toMillis()),
                recordTtlSeconds,
                Long.toString(confirmed),
                Integer.toString(finals.size()),
                Integer.toString(confirmedByUser.size()),
                freezeToken));
        confirmedByUser.forEach((user, units) -> {
            args.add(user);
            args.add(Integer.toString(units));
        });
        for (StoredOrder order : finals) {
            args.addAll(List.of(
                    order.orderId().toString(),
                    order.status().name(),
                    Integer.toString(order.quantity()),
                    order.userId(),
                    order.mode().name(),
                    Long.toString(order.createdAt().toEpochMilli()),
                    order.failureCode()));
        }
        recorded.stream().filter(id -> !inPostgres.contains(id)).forEach(id -> args.add(id.toString()));
        List<String> result = LuaScripts.run(redis, REBUILD_SALE, scriptKeys, args.toArray(String[]::new));
        if (result.getFirst().equals("LAPSED")) {
            return Optional.empty();
        }
        return Optional.of(new SaleCounters(stock, Long.parseLong(result.get(0)), Long.parseLong(result.get(1))));
    }

    /**
     * The ids of every reservation record of the sale: the fields of its records' hash, read in one command,
     * for rebuilds (under their freeze, before they lock any row), never for the hot path. The hash lives in
     * the sale's slot, so on Redis Cluster too one master holds all of it.
     */
    public List<UUID> reservationRecords(long saleId) {
        HashOperations<String, String, String> records = redis.opsForHash();
        return records.keys(new SaleKeys(saleId).orders()).stream()
                .map(UUID::fromString)
                .toList();
    }
}
