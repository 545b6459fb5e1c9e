package dev.flashsale.api.security;

import org.springframework.security.core.Authentication;

/** The caller, as the bearer token names it. */
public record Shopper(String userId, boolean admin) {

    public static Shopper of(Authentication authentication) {
        boolean admin = authentication.getAuthorities().stream()
                .anyMatch(authority -> SecurityConfiguration.ADMIN.equals(authority.getAuthority()));
        return new Shopper(authentication.getName(), admin);
    }
}
