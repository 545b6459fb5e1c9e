package dev.flashsale.api.mode;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/** app.mode.*: where the runtime mode flag lives and how often every instance re-reads it. */
@ConfigurationProperties("app.mode")
public record ModeProperties(
        @DefaultValue("flashsale:mode") String redisKey,
        @DefaultValue("500ms") Duration refreshInterval,
        @DefaultValue("SYNC") ModeSetting defaultMode) {}
