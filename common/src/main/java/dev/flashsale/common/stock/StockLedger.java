package dev.flashsale.common.stock;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import dev.flashsale.common.redis.LuaScripts;
import dev.flashsale.common.redis.RedisBytes;
import dev.flashsale.common.redis.ScriptCalls;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisPipelineException;
import org.springframework.data.redis.connection.RedisStringCommands;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.HashOperations;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.stereotype.Component;

/**
 * Stock during a sale lives in Redis, and every change an order makes to it is one Lua script: reserve,
 * release, advance. Scripts are idempotent by order id, so a command replayed after a reconnect changes
 * nothing. A sale's state as a whole is {@link SaleStock}'s, its rebuild {@link StockRebuild}'s, and the
 * reconciler's view of what still holds stock {@link PendingReservations}'.
 */
@Component
public class StockLedger {

    /**
     * Most orders one reserve call carries: the script holds Redis for the whole call and passes the pending
     * set's members to one ZADD on Lua's stack.
     */
    private static final int MAX_ORDERS_PER_CALL = 500;

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> RESERVE = LuaScripts.load("reserve", List.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> RELEASE = LuaScripts.load("release", List.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ADVANCE = LuaScripts.load("advance", List.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> CONFIRM_RELEASED = LuaScripts.load("confirm_released", List.class);

    private final StringRedisTemplate redis;
    private final ScriptCalls scripts;
    private final Duration recordTtl;
    private final String recordTtlSeconds;
    private final String refusalTtlSeconds;
    private final String instance;

    /** {@code leases}: the records this process reserves carry its instance ({@link InstanceLeases}). */
    public StockLedger(StringRedisTemplate redis, StockProperties properties, InstanceLeases leases) {
        this.redis = redis;
        this.scripts = new ScriptCalls(redis);
        this.recordTtl = properties.orderTtl();
        this.recordTtlSeconds = Long.toString(recordTtl.toSeconds());
        this.refusalTtlSeconds = Long.toString(properties.refusalTtl().toSeconds());
        this.instance = leases.instance();
    }

    /**
     * Reserves {@code quantity} units for the order. With {@code rememberRefusal}, a refusal is recorded
     * under the order id so that a replay of the same Idempotency-Key gets the same answer.
     */
    public ReserveResult reserve(
            long saleId,
            UUID orderId,
            String userId,
            int quantity,
            PurchasePath mode,
            Instant now,
            boolean rememberRefusal) {
        return reserveAll(saleId, List.of(new ReserveRequest(orderId, userId, quantity, mode, now, rememberRefusal)))
                .getFirst();
    }

    /**
     * Reserves for many orders of one sale in one script call (one Redis round trip), each decided in turn
     * in the order of {@code requests}, as if it ran alone after the ones before it; the results come back
     * in that order.
     */
    public List<ReserveResult> reserveAll(long saleId, List<ReserveRequest> requests) {
        List<ReserveResult> results = new ArrayList<>(requests.size());
        for (int from = 0; from < requests.size(); from += MAX_ORDERS_PER_CALL) {
            ReserveCall call = new ReserveCall(
                    saleId, requests.subList(from, Math.min(requests.size(), from + MAX_ORDERS_PER_CALL)));
            // Every purchase runs this: its wait is Lettuce's own, without a timer per call (ScriptCalls).
            results.addAll(call.results(
                    scripts.run(RESERVE, call.keys(), call.args(recordTtlSeconds, refusalTtlSeconds, instance))));
        }
        return results;
    }

    /** Gives the units back, once, if the record is in one of {@code from}; it then ends in {@code to}. */
    public Transition release(long saleId, UUID orderId, Set<ReservationState> from, ReservationState to, String code) {
        return transition(LuaScripts.run(
                redis,
                RELEASE,
                new SaleKeys(saleId).forReservation(),
                orderId.toString(),
                ReservationState.csv(from),
                to.name(),
                code));
    }

    /** Moves the record to {@code to} if it is in one of {@code from}; reaching CONFIRMED ends the hold. */
    public Transition advance(long saleId, UUID orderId, Set<ReservationState> from, ReservationState to) {
        return advanceAll(saleId, List.of(orderId), from, to).getFirst();
    }

    /**
     * {@link #advance} for many orders of one sale in one script call (one Redis round trip for a batch);
     * the transitions come back in the order of {@code orderIds}.
     */
    public List<Transition> advanceAll(
            long saleId, List<UUID> orderIds, Set<ReservationState> from, ReservationState to) {
        if (orderIds.isEmpty()) {
            return List.of();
        }
        return advanced(new AdvanceCall(saleId, orderIds, from, to));
    }

    private List<Transition> advanced(AdvanceCall advance) {
        return advance.transitions(LuaScripts.run(redis, ADVANCE, advance.keys(), advance.args()));
    }

    /**
     * Marks a batch of one sale's ASYNC orders published, once the broker confirmed the message that
     * carries them: each order whose id does not carry its sale ({@link OrderIds#saleOf}) indexed for status
     * reads, and its record moved RESERVED → PUBLISHED ({@link #advanceAll}), pipelined in one round trip. Below the knee a batch is
     * mostly one order, and each step alone costs a round trip. When Redis has lost the script from its
     * cache (a restart), the two steps run apart once more, which loads it; both are idempotent.
     */
    public List<Transition> markPublished(long saleId, List<UUID> orderIds) {
        return markPublished(saleId, orderIds, false);
    }

    /**
     * {@link #markPublished} for an ASYNC order its API left RESERVED, once the reconciler's own message for it
     * was confirmed, and dated anew: its age in the pending set counts from this publication, so that the
     * reconciler reads it past the hand-off timeout only if no worker claimed it since.
     */
    public Transition publishedLate(long saleId, UUID orderId) {
        return markPublished(saleId, List.of(orderId), true).getFirst();
    }

    private List<Transition> markPublished(long saleId, List<UUID> orderIds, boolean datesAnew) {
        if (orderIds.isEmpty()) {
            return List.of();
        }
        AdvanceCall advance = new AdvanceCall(
                saleId, orderIds, EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED, datesAnew);
        List<String> keys = advance.keys();
        byte[][] keysAndArgs = Stream.concat(keys.stream(), Arrays.stream(advance.args()))
                .map(RedisBytes::of)
                .toArray(byte[][]::new);
        List<Object> results;
        try {
            results = redis.executePipelined((RedisCallback<Object>) connection -> {
                index(connection, orderIds, saleId);
                connection.scriptingCommands().evalSha(ADVANCE.getSha1(), ReturnType.MULTI, keys.size(), keysAndArgs);
                return null;
            });
        } catch (RedisPipelineException e) {
            indexOrders(orderIds, saleId);
            return advanced(advance);
        }
        if (!(results.getLast() instanceof List<?> answered)) {
            throw new IllegalStateException("advance script answered " + results.getLast());
        }
        return advance.transitions(answered.stream().map(StockLedger::text).toList());
    }

    private static String text(Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    /** Ends the hold of confirmed orders of one sale, in one call; true per order this call moved. */
    public List<Boolean> settleConfirmed(long saleId, List<UUID> orderIds) {
        return advanceAll(saleId, orderIds, ReservationState.PENDING, ReservationState.CONFIRMED).stream()
                .map(Transition::changed)
                .toList();
    }

    /**
     * Brings a reservation in line with its order's final status in Postgres: a confirmed order ends its
     * hold, a rejected or failed one gives its units back. Only out of a pending state, so settling twice,
     * or from two processes, changes nothing the second time. True when this call moved it.
     */
    public boolean settle(long saleId, UUID orderId, OrderStatus status, String code) {
        return switch (status) {
            case CONFIRMED -> settleConfirmed(saleId, List.of(orderId)).getFirst();
            case REJECTED ->
                release(saleId, orderId, ReservationState.PENDING, ReservationState.REJECTED, code)
                        .changed();
            case FAILED ->
                release(saleId, orderId, ReservationState.PENDING, ReservationState.FAILED, code)
                        .changed();
            case QUEUED -> false;
        };
    }

    /**
     * Takes the units of a RELEASED reservation again and marks it CONFIRMED: for an order Postgres confirmed
     * after its reservation was given back (a write that outlasted the reconciler's grace). Changes nothing
     * from any other state.
     */
    public Transition confirmReleased(long saleId, UUID orderId) {
        return transition(
                LuaScripts.run(redis, CONFIRM_RELEASED, new SaleKeys(saleId).forReservation(), orderId.toString()));
    }

    /** The order's reservation record, or the refusal remembered under its id; empty when Redis has neither. */
    public Optional<Reservation> find(long saleId, UUID orderId) {
        SaleKeys keys = new SaleKeys(saleId);
        String id = orderId.toString();
        HashOperations<String, String, String> records = redis.opsForHash();
        String record = records.get(keys.orders(), id);
        if (record == null) {
            record = records.get(keys.refusals(), id);
        }
        return Optional.ofNullable(record).map(found -> Reservation.parse(saleId, orderId, found));
    }

    /**
     * Remembers which sale each order belongs to, so its status can be read before Postgres has it; one
     * pipelined round trip for the batch.
     */
    private void indexOrders(List<UUID> orderIds, long saleId) {
        redis.executePipelined((RedisCallback<Object>) connection -> {
            index(connection, orderIds, saleId);
            return null;
        });
    }

    private void index(RedisConnection connection, List<UUID> orderIds, long saleId) {
        byte[] sale = RedisBytes.of(Long.toString(saleId));
        for (UUID orderId : orderIds) {
            if (OrderIds.saleOf(orderId).isPresent()) {
                continue;
            }
            connection
                    .stringCommands()
                    .set(
                            RedisBytes.of(SaleKeys.orderIndex(orderId)),
                            sale,
                            Expiration.from(recordTtl),
                            RedisStringCommands.SetOption.upsert());
        }
    }

    /** The order's sale: from its id when it carries it, else from the index its publication wrote. */
    public Optional<Long> saleOf(UUID orderId) {
        OptionalLong carried = OrderIds.saleOf(orderId);
        if (carried.isPresent()) {
            return Optional.of(carried.getAsLong());
        }
        return Optional.ofNullable(redis.opsForValue().get(SaleKeys.orderIndex(orderId)))
                .map(Long::valueOf);
    }

    private static Transition transition(List<String> result) {
        @Nullable ReservationState state = result.size() > 1 ? ReservationState.valueOf(result.get(1)) : null;
        return new Transition("CHANGED".equals(result.getFirst()), state);
    }
}
