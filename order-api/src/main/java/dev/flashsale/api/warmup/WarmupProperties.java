package dev.flashsale.api.warmup;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.warmup.*
 *
 * @param enabled whether the instance rehearses the purchase path before it reports ready (env
 *     APP_WARMUP_ENABLED; on in the Kubernetes and Compose files, off locally and in tests)
 * @param budget the longest the warm-up holds readiness back; what is left undone then is skipped
 * @param requests purchase and status requests sent to the instance's own port
 * @param concurrency parallel senders of those requests and rehearsals (at most the connection pool: each
 *     rolled-back transaction holds a connection)
 * @param rounds rounds of the Redis scripts, the rolled-back order insert and the unroutable publish
 */
@Validated
@ConfigurationProperties("app.warmup")
public record WarmupProperties(
        @DefaultValue("false") boolean enabled,
        @DefaultValue("30s") Duration budget,
        @DefaultValue("1500") @Min(0) int requests,
        @DefaultValue("4") @Min(1) @Max(32) int concurrency,
        @DefaultValue("200") @Min(0) int rounds) {}
