package dev.flashsale.api.mode;

import dev.flashsale.common.order.PurchasePath;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;

/**
 * The one place that decides the purchase mode. The flag lives in Redis so every API instance follows a
 * change within {@code app.mode.refresh-interval}; a forced SYNC or ASYNC always wins over AUTO, which
 * follows the {@link AutoPilot}. Until the flag was first read, and while Redis cannot be read, the last
 * known flag (initially the configured default) stays in force.
 */
@Service
public class ModeSwitch {

    private static final Logger log = LoggerFactory.getLogger(ModeSwitch.class);

    private final StringRedisTemplate redis;
    private final JdbcClient jdbc;
    private final ModeProperties properties;
    private final AutoPilot autoPilot;
    private final Clock clock;
    private volatile ModeFlag flag;
    /** Changes made here so far: a refresh that read the flag before one of them holds an older flag. */
    private long changes; // guarded by this

    ModeSwitch(
            StringRedisTemplate redis, JdbcClient jdbc, ModeProperties properties, AutoPilot autoPilot, Clock clock) {
        this.redis = redis;
        this.jdbc = jdbc;
        this.properties = properties;
        this.autoPilot = autoPilot;
        this.clock = clock;
        this.flag = new ModeFlag(properties.defaultMode(), null, "default", "configured default");
        autoPilot.engage(flag.mode() == ModeSetting.AUTO);
    }

    /** The mode in force: the forced one, or AUTO's recommendation. */
    public PurchasePath effective() {
        return switch (flag.mode()) {
            case SYNC -> PurchasePath.SYNC;
            case ASYNC -> PurchasePath.ASYNC;
            case AUTO -> autoPilot.recommended();
        };
    }

    public ModeSetting setting() {
        return flag.mode();
    }

    ModeFlag flag() {
        return flag;
    }

    /**
     * Audits the change in Postgres (committed on its own), then sets the flag for every instance, and
     * applies it here at once. A change whose audit cannot be written is not made; an audit row whose flag
     * could not be set is deleted again (should that fail too, the audit shows a change that was not made,
     * never the reverse).
     */
    ModeFlag change(ModeSetting mode, String changedBy, String reason) {
        ModeFlag previous = read();
        long audit = jdbc.sql(
                        "insert into mode_change (changed_by, from_mode, to_mode, reason) values (:by, :from, :to, :reason) returning id")
                .param("by", changedBy)
                .param("from", previous.mode().name())
                .param("to", mode.name())
                .param("reason", reason)
                .query(Long.class)
                .single();
        // Stamped once audited, as the flag is set: the instances follow from here (the audit may take a
        // while when Postgres is busy; until the flag is set, no instance could follow).
        ModeFlag next = new ModeFlag(mode, clock.instant(), changedBy, reason);
        try {
            redis.opsForHash()
                    .putAll(
                            properties.redisKey(),
                            Map.of(
                                    "mode",
                                    mode.name(),
                                    "changedAt",
                                    next.changedAt().toString(),
                                    "changedBy",
                                    changedBy,
                                    "reason",
                                    reason));
        } catch (RuntimeException e) {
            jdbc.sql("delete from mode_change where id = :id")
                    .param("id", audit)
                    .update();
            throw e;
        }
        log.info("purchase mode set {} -> {} by {} ({})", previous.mode(), mode, changedBy, reason);
        synchronized (this) {
            changes++;
            flag = next;
            autoPilot.engage(mode == ModeSetting.AUTO);
        }
        return next;
    }

    @Scheduled(fixedDelayString = "${app.mode.refresh-interval:500ms}")
    void refresh() {
        long seen;
        synchronized (this) {
            seen = changes;
        }
        try {
            ModeFlag current = read();
            synchronized (this) {
                if (changes != seen) {
                    return; // changed here while this read was under way: what it read is older
                }
                if (current.mode() != flag.mode()) {
                    log.info(
                            "purchase mode is now {} (set by {} at {})",
                            current.mode(),
                            current.changedBy(),
                            current.changedAt());
                }
                flag = current;
                autoPilot.engage(current.mode() == ModeSetting.AUTO);
            }
        } catch (RuntimeException e) {
            log.debug("mode flag not readable, keeping {}: {}", flag.mode(), e.toString());
        }
    }

    private ModeFlag read() {
        Map<Object, Object> stored = redis.opsForHash().entries(properties.redisKey());
        Object mode = stored.get("mode");
        if (mode == null) {
            return new ModeFlag(properties.defaultMode(), null, "default", "configured default");
        }
        Object changedAt = stored.get("changedAt");
        return new ModeFlag(
                ModeSetting.valueOf((String) mode),
                changedAt == null ? null : Instant.parse((String) changedAt),
                (String) stored.getOrDefault("changedBy", ""),
                (String) stored.getOrDefault("reason", ""));
    }
}
