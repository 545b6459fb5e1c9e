package dev.flashsale.common.stock;

import dev.flashsale.common.redis.LuaScripts;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The API instances' leases (instance_lease.lua): each API beats its own every second, and every record its
 * requests reserve carries its {@link #instance() id} (shared.lua). An instance has lapsed once another one
 * has beaten at least a lease after it did; the reconciler then settles the records it held at once, instead
 * of after the grace: an instance killed mid-crowd gives its units back in seconds. A lone instance never
 * lapses.
 */
@Component
public class InstanceLeases {

    /** The sorted set of API instances by their latest heartbeat, on Redis's clock. */
    static final String KEY = "instances";

    /** Beats and forgets: their answers are a number. */
    private static final RedisScript<Long> LEASE = LuaScripts.load("instance_lease", Long.class);

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> LAPSED = LuaScripts.load("instance_lease", List.class);

    private static final SecureRandom RANDOM = new SecureRandom();

    private final StringRedisTemplate redis;
    private final String instance;

    public InstanceLeases(StringRedisTemplate redis) {
        this.redis = redis;
        // Letters and digits only: a record dates itself 'createdMillis@instance' (shared.lua).
        this.instance = Long.toString(RANDOM.nextLong() >>> 1, Character.MAX_RADIX);
    }

    /** This process's id: new at every start, so a restarted instance lets its former self lapse. */
    public String instance() {
        return instance;
    }

    /** Renews this instance's lease. */
    public void beat() {
        redis.execute(LEASE, List.of(KEY), "beat", instance);
    }

    /** The instances another one has outlived by {@code lease}: the records they hold are theirs no more. */
    public List<String> lapsed(Duration lease) {
        List<?> lapsed = redis.execute(LAPSED, List.of(KEY), "lapsed", Long.toString(lease.toMillis()));
        return lapsed == null ? List.of() : lapsed.stream().map(String::valueOf).toList();
    }

    /** Forgets the lapsed instances whose records are settled, each only if it has not beaten again since. */
    public void forget(Duration lease, Collection<String> instances) {
        List<String> args = new ArrayList<>(instances.size() + 2);
        args.add("forget");
        args.add(Long.toString(lease.toMillis()));
        args.addAll(instances);
        redis.execute(LEASE, List.of(KEY), args.toArray(String[]::new));
    }
}
