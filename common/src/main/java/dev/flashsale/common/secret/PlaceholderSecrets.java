package dev.flashsale.common.secret;

import java.util.Arrays;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.stereotype.Component;

/**
 * Every secret committed to this repository (the yml defaults, the Kubernetes base and prod placeholders)
 * contains {@value #MARK}: one that reaches a process outside the local profile means the deploy pipeline did
 * not replace it. Both applications then refuse to start, naming the variable to set: the Redis password here
 * (both read it), the API's JWT secret in its token rules.
 */
@Component
public final class PlaceholderSecrets {

    public static final String MARK = "change-me";

    public static final String LOCAL_PROFILE = "local";

    PlaceholderSecrets(Environment environment) {
        refuse(
                "spring.data.redis.password",
                "REDIS_PASSWORD",
                environment.getProperty("spring.data.redis.password", ""),
                environment);
    }

    /** Throws when {@code value} is a committed placeholder and the local profile is not active. */
    public static void refuse(String property, String variable, String value, Environment environment) {
        if (value.contains(MARK) && !environment.acceptsProfiles(Profiles.of(LOCAL_PROFILE))) {
            throw new IllegalStateException(property + " is a committed placeholder (it contains '" + MARK
                    + "'), and the '" + LOCAL_PROFILE + "' profile is not active (profiles: "
                    + Arrays.toString(environment.getActiveProfiles()) + "). Set " + variable
                    + " to a secret of your own, or run with SPRING_PROFILES_ACTIVE=" + LOCAL_PROFILE
                    + " on a development machine.");
        }
    }
}
