package dev.flashsale.api.security;

import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * app.security.*
 *
 * @param jwtSecret the HS256 secret that signs bearer tokens (env APP_SECURITY_JWT_SECRET); a committed
 *     placeholder is refused outside the {@code local} profile
 * @param issuer when set, a token's {@code iss} must equal it (env APP_SECURITY_ISSUER)
 * @param audience when set, a token's {@code aud} must contain it (env APP_SECURITY_AUDIENCE)
 * @param clockSkew how far {@code exp}, {@code nbf} and {@code iat} may be off the API's clock
 */
@Validated
@ConfigurationProperties("app.security")
public record SecurityProperties(
        @NotNull @Size(min = 32, message = "must be at least 32 bytes for HS256")
        String jwtSecret,

        @Nullable String issuer,
        @Nullable String audience,
        @DefaultValue("30s") Duration clockSkew) {}
