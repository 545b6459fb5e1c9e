package dev.flashsale.common.stock;

import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchaseMode;
import dev.flashsale.common.order.StoredOrder;
import dev.flashsale.common.redis.ScriptCalls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisPipelineException;
import org.springframework.data.redis.connection.RedisStringCommands;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.stereotype.Component;

/**
 * Stock during a sale lives in Redis, and every change to it is one Lua script: reserve, release,
 * advance. Scripts are idempotent by order id, so a command replayed after a reconnect changes nothing.
 */
@Component
public class StockLedger {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> RESERVE = script("reserve");

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> RELEASE = script("release");

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ADVANCE = script("advance");

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> CONFIRM_RELEASED = script("confirm_released");

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> HOLDING = script("holding");

    private static final RedisScript<Long> LOAD_SALE = RedisScript.of(text("load_sale"), Long.class);

    private static final RedisScript<Long> HOLD_SALE = RedisScript.of(text("hold_sale"), Long.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> REBUILD_SALE = script("rebuild_sale");

    private final StringRedisTemplate redis;
    private final ScriptCalls scripts;
    private final Duration recordTtl;
    private final String recordTtlSeconds;
    private final String refusalTtlSeconds;

    public StockLedger(StringRedisTemplate redis, StockProperties properties) {
        this.redis = redis;
        this.scripts = new ScriptCalls(redis);
        this.recordTtl = properties.orderTtl();
        this.recordTtlSeconds = Long.toString(recordTtl.toSeconds());
        this.refusalTtlSeconds = Long.toString(properties.refusalTtl().toSeconds());
    }

    @SuppressWarnings("rawtypes")
    private static RedisScript<List> script(String name) {
        return RedisScript.of(text(name), List.class);
    }

    /**
     * A script's text, read once. A script built from a Resource re-checks the resource's modification
     * time before every call (inside a jar: a failed file lookup and an exception per call), which cost
     * the purchase path more CPU than the Redis call itself.
     */
    private static String text(String name) {
        try {
            return new ClassPathResource("redis/" + name + ".lua").getContentAsString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Lua script redis/" + name + ".lua is missing", e);
        }
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

    /**
     * Refuses reservations of the sale (REBUILDING) for {@code lease}, or until a rebuild ends first;
     * returns the hold's token, which {@link #rebuild} must present.
     */
    public String hold(long saleId, Duration lease) {
        String token = UUID.randomUUID().toString();
        redis.execute(HOLD_SALE, List.of(new SaleKeys(saleId).sale()), Long.toString(lease.toMillis()), token);
        return token;
    }

    /**
     * Rewrites the sale's state from what Postgres holds ({@code stored}: every order of the sale) and
     * the reservation records Redis still has ({@code recorded}, read by {@link #reservationRecords} under
     * the hold): remaining = stock - confirmed - held by records of orders Postgres does not have yet.
     * Reservations stay refused for {@code hold} afterwards, so that orders reserved before the loss and
     * still in flight land in Postgres first. Call it with the sale's stock rows locked in Postgres. Empty,
     * and nothing written, when the hold of {@code holdToken} ran out (or another rebuild's replaced it):
     * reservations taken since then are missing from {@code recorded}.
     */
    public Optional<SaleCounters> rebuild(
            long saleId,
            String holdToken,
            int stock,
            int perUserLimit,
            Instant startsAt,
            Instant endsAt,
            Duration hold,
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
        List<String> scriptKeys = new ArrayList<>(List.of(keys.sale(), keys.users(), keys.holding()));
        finals.forEach(order -> scriptKeys.add(keys.order(order.orderId())));
        recorded.stream().filter(id -> !inPostgres.contains(id)).forEach(id -> scriptKeys.add(keys.order(id)));
        List<String> args = new ArrayList<>(List.of(
                Integer.toString(stock),
                Integer.toString(perUserLimit),
                Long.toString(startsAt.toEpochMilli()),
                Long.toString(endsAt.toEpochMilli()),
                Long.toString(hold.toMillis()),
                recordTtlSeconds,
                Long.toString(confirmed),
                Integer.toString(finals.size()),
                Integer.toString(confirmedByUser.size()),
                holdToken));
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
        List<String> result = run(REBUILD_SALE, scriptKeys, args.toArray(String[]::new));
        if (result.getFirst().equals("LAPSED")) {
            return Optional.empty();
        }
        return Optional.of(new SaleCounters(stock, Long.parseLong(result.get(0)), Long.parseLong(result.get(1))));
    }

    /**
     * The ids of every reservation record of the sale: a SCAN of the keyspace, for rebuilds (under their
     * hold, before they lock any row), never for the hot path.
     */
    public List<UUID> reservationRecords(long saleId) {
        String prefix = new SaleKeys(saleId).orderPrefix();
        List<UUID> ids = new ArrayList<>();
        // Braces are literal in a SCAN pattern; a UUID holds no glob character.
        try (Cursor<String> cursor = redis.scan(
                ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
            cursor.forEachRemaining(key -> ids.add(UUID.fromString(key.substring(prefix.length()))));
        }
        return ids;
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
            PurchaseMode mode,
            Instant now,
            boolean rememberRefusal) {
        // Every purchase runs this: its wait is Lettuce's own, without a timer per call (ScriptCalls).
        List<String> result = scripts
                .run(
                        RESERVE,
                        new SaleKeys(saleId).forReservation(orderId),
                        orderId.toString(),
                        userId,
                        Integer.toString(quantity),
                        Long.toString(now.toEpochMilli()),
                        mode.name(),
                        rememberRefusal ? "1" : "0",
                        recordTtlSeconds,
                        refusalTtlSeconds)
                .stream()
                .map(String::valueOf)
                .toList();
        return switch (result.isEmpty() ? "" : result.getFirst()) {
            case "RESERVED" -> new ReserveResult.Reserved(Long.parseLong(result.get(1)));
            case "REFUSED" -> new ReserveResult.Refused(result.get(1));
            case "UNAVAILABLE" -> new ReserveResult.Unavailable(result.get(1));
            case "EXISTS" ->
                new ReserveResult.Existing(
                        ReservationState.valueOf(result.get(1)), PurchaseMode.valueOf(result.get(2)), result.get(3));
            default -> throw new IllegalStateException("reserve script answered " + result);
        };
    }

    /** Gives the units back, once, if the record is in one of {@code from}; it then ends in {@code to}. */
    public Transition release(long saleId, UUID orderId, Set<ReservationState> from, ReservationState to, String code) {
        return transition(run(
                RELEASE,
                new SaleKeys(saleId).forReservation(orderId),
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
        Advance advance = new Advance(saleId, orderIds, from, to);
        return advance.transitions(run(ADVANCE, advance.keys(), advance.args()));
    }

    /**
     * The ASYNC hand-over of a batch of one sale's orders, once the broker confirmed the message that
     * carries them: each order indexed for status reads and its record moved
     * RESERVED → PUBLISHED ({@link #advanceAll}), pipelined in one round trip. Below the knee a batch is
     * mostly one order, and each step alone costs a round trip. When Redis has lost the script from its
     * cache (a restart), the two steps run apart once more, which loads it; both are idempotent.
     */
    public List<Transition> handOver(long saleId, List<UUID> orderIds) {
        if (orderIds.isEmpty()) {
            return List.of();
        }
        Advance advance =
                new Advance(saleId, orderIds, EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED);
        List<String> keys = advance.keys();
        byte[][] keysAndArgs = Stream.concat(keys.stream(), Arrays.stream(advance.args()))
                .map(value -> value.getBytes(StandardCharsets.UTF_8))
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
            return advanceAll(saleId, orderIds, advance.from(), advance.to());
        }
        if (!(results.getLast() instanceof List<?> answered)) {
            throw new IllegalStateException("advance script answered " + results.getLast());
        }
        return advance.transitions(answered.stream().map(StockLedger::text).toList());
    }

    private static String text(Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    /** One call of the advance script: its keys and arguments, and how its answer reads. */
    private record Advance(long saleId, List<UUID> orderIds, Set<ReservationState> from, ReservationState to) {

        List<String> keys() {
            SaleKeys keys = new SaleKeys(saleId);
            List<String> scriptKeys = new ArrayList<>(orderIds.size() + 2);
            scriptKeys.add(keys.sale());
            scriptKeys.add(keys.holding());
            for (UUID orderId : orderIds) {
                scriptKeys.add(keys.order(orderId));
            }
            return scriptKeys;
        }

        String[] args() {
            String[] args = new String[orderIds.size() + 3];
            args[0] = ReservationState.csv(from);
            args[1] = to.name();
            args[2] = to == ReservationState.CONFIRMED ? "1" : "0";
            for (int i = 0; i < orderIds.size(); i++) {
                args[i + 3] = orderIds.get(i).toString();
            }
            return args;
        }

        List<Transition> transitions(List<String> results) {
            if (results.size() != orderIds.size()) {
                throw new IllegalStateException(
                        "advance script answered " + results.size() + " results for " + orderIds.size() + " orders");
            }
            return results.stream().map(StockLedger::advanced).toList();
        }
    }

    /** Ends the hold of confirmed orders of one sale, in one call; true per order this call moved. */
    public List<Boolean> settleConfirmed(long saleId, List<UUID> orderIds) {
        return advanceAll(saleId, orderIds, ReservationState.HOLDING, ReservationState.CONFIRMED).stream()
                .map(Transition::changed)
                .toList();
    }

    /**
     * Brings a reservation in line with its order's final status in Postgres: a confirmed order ends its
     * hold, a rejected or failed one gives its units back. Only out of a holding state, so settling twice,
     * or from two processes, changes nothing the second time. True when this call moved it.
     */
    public boolean settle(long saleId, UUID orderId, OrderStatus status, String code) {
        return switch (status) {
            case CONFIRMED -> settleConfirmed(saleId, List.of(orderId)).getFirst();
            case REJECTED ->
                release(saleId, orderId, ReservationState.HOLDING, ReservationState.REJECTED, code)
                        .changed();
            case FAILED ->
                release(saleId, orderId, ReservationState.HOLDING, ReservationState.FAILED, code)
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
        return transition(run(CONFIRM_RELEASED, new SaleKeys(saleId).forReservation(orderId)));
    }

    public Optional<Reservation> find(long saleId, UUID orderId) {
        Map<Object, Object> record = redis.opsForHash().entries(new SaleKeys(saleId).order(orderId));
        if (record.isEmpty() || record.get("state") == null) {
            return Optional.empty();
        }
        return Optional.of(new Reservation(
                saleId,
                orderId,
                (String) record.get("user"),
                Integer.parseInt((String) record.get("qty")),
                ReservationState.valueOf((String) record.get("state")),
                PurchaseMode.valueOf((String) record.get("mode")),
                Instant.ofEpochMilli(Long.parseLong((String) record.get("created"))),
                (String) record.getOrDefault("code", "")));
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

    /** Units the user holds or bought in this sale, as Redis counts them. */
    public long unitsOf(long saleId, String userId) {
        Object units = redis.opsForHash().get(new SaleKeys(saleId).users(), userId);
        return units == null ? 0 : Long.parseLong((String) units);
    }

    /** A reservation that still holds stock, and how long ago it was reserved by Redis's clock. */
    public record Holding(UUID orderId, Duration age) {}

    /**
     * The sale's reservations still holding stock (RESERVED, PUBLISHED, CLAIMED, WRITING) that were made
     * (a CLAIMED one: last claimed) at least {@code minAge} ago, oldest first, {@code limit} of them after skipping {@code offset}. Ages are measured by Redis's own clock
     * on both ends, so API and worker hosts' clocks never meet.
     */
    public List<Holding> holding(long saleId, Duration minAge, int offset, int limit) {
        List<String> result = run(
                HOLDING,
                List.of(new SaleKeys(saleId).holding()),
                Long.toString(minAge.toMillis()),
                Integer.toString(offset),
                Integer.toString(limit));
        long now = Long.parseLong(result.getFirst());
        List<Holding> holdings = new ArrayList<>((result.size() - 1) / 2);
        for (int i = 1; i + 1 < result.size(); i += 2) {
            long reservedAt = (long) Double.parseDouble(result.get(i + 1));
            holdings.add(new Holding(UUID.fromString(result.get(i)), Duration.ofMillis(Math.max(0, now - reservedAt))));
        }
        return holdings;
    }

    /**
     * The sales among {@code saleIds} with at least one reservation still holding stock, in one pipelined
     * round trip: the reconciler visits only these, instead of one script call per recent sale.
     */
    public List<Long> salesHolding(List<Long> saleIds) {
        if (saleIds.isEmpty()) {
            return List.of();
        }
        List<Object> sizes = redis.executePipelined((RedisCallback<Object>) connection -> {
            for (long saleId : saleIds) {
                connection.zSetCommands().zCard(new SaleKeys(saleId).holding().getBytes(StandardCharsets.UTF_8));
            }
            return null;
        });
        List<Long> holding = new ArrayList<>();
        for (int i = 0; i < saleIds.size(); i++) {
            if (sizes.get(i) instanceof Long size && size > 0) {
                holding.add(saleIds.get(i));
            }
        }
        return holding;
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
        byte[] sale = Long.toString(saleId).getBytes(StandardCharsets.UTF_8);
        for (UUID orderId : orderIds) {
            connection
                    .stringCommands()
                    .set(
                            SaleKeys.orderIndex(orderId).getBytes(StandardCharsets.UTF_8),
                            sale,
                            Expiration.from(recordTtl),
                            RedisStringCommands.SetOption.upsert());
        }
    }

    public Optional<Long> saleOf(UUID orderId) {
        return Optional.ofNullable(redis.opsForValue().get(SaleKeys.orderIndex(orderId)))
                .map(Long::valueOf);
    }

    /**
     * Deletes every key of a sale and the index entries of the given orders: for a throw-away sale that
     * no shopper can reach (the API's warm-up), never for a real one.
     */
    public void discard(long saleId, Collection<UUID> orderIds) {
        SaleKeys keys = new SaleKeys(saleId);
        List<String> doomed = new ArrayList<>(2 * orderIds.size() + 3);
        doomed.add(keys.sale());
        doomed.add(keys.users());
        doomed.add(keys.holding());
        for (UUID orderId : orderIds) {
            doomed.add(keys.order(orderId));
            doomed.add(SaleKeys.orderIndex(orderId));
        }
        redis.delete(doomed);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private List<String> run(RedisScript<List> script, List<String> keys, String... args) {
        List result = redis.execute(script, keys, (Object[]) args);
        if (result == null || result.isEmpty()) {
            throw new IllegalStateException("script " + script.getSha1() + " returned nothing");
        }
        return (List<String>) result;
    }

    /** One entry of the advance script's answer: {@code CHANGED:STATE}, {@code UNCHANGED:STATE} or {@code MISSING}. */
    private static Transition advanced(String result) {
        int colon = result.indexOf(':');
        if (colon < 0) {
            return new Transition(false, null);
        }
        return new Transition(result.startsWith("CHANGED"), ReservationState.valueOf(result.substring(colon + 1)));
    }

    private static Transition transition(List<String> result) {
        @Nullable ReservationState state = result.size() > 1 ? ReservationState.valueOf(result.get(1)) : null;
        return new Transition("CHANGED".equals(result.getFirst()), state);
    }
}
