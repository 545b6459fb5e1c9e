package dev.flashsale.api.security;

import jakarta.validation.constraints.Size;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.annotation.Validated;

/** app.security.*: the HS256 secret that signs bearer tokens (env APP_SECURITY_JWT_SECRET). */
@Validated
@ConfigurationProperties("app.security")
public record SecurityProperties(
        @Size(min = 32, message = "must be at least 32 bytes for HS256")
        String jwtSecret) {}
