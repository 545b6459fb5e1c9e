package dev.flashsale.api.security;

import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.config.observation.SecurityObservationSettings;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.web.SecurityFilterChain;
import tools.jackson.databind.json.JsonMapper;

/**
 * Bearer JWTs signed with HS256. {@code sub} is the user id; the {@code scope} claim holds {@code orders}
 * for shoppers and {@code admin} for operations. Auth failures are problem details too.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

    static final String SHOPPER = "SCOPE_orders";
    static final String ADMIN = "SCOPE_admin";

    @Bean
    SecurityFilterChain api(HttpSecurity http, JsonMapper json) throws Exception {
        http.csrf(csrf -> csrf.disable())
                .sessionManagement(session -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .authorizeHttpRequests(requests -> requests.requestMatchers(
                                "/actuator/health/**", "/actuator/health", "/actuator/info", "/actuator/prometheus")
                        .permitAll()
                        .requestMatchers("/v3/api-docs/**", "/error")
                        .permitAll()
                        .requestMatchers(HttpMethod.GET, "/api/v1/sales/*")
                        .permitAll()
                        .requestMatchers(HttpMethod.POST, "/api/v1/sales")
                        .hasAuthority(ADMIN)
                        .requestMatchers("/api/v1/admin/**")
                        .hasAuthority(ADMIN)
                        .requestMatchers("/actuator/**")
                        .hasAuthority(ADMIN)
                        .anyRequest()
                        .hasAnyAuthority(SHOPPER, ADMIN))
                .oauth2ResourceServer(resource -> resource.jwt(Customizer.withDefaults())
                        .authenticationEntryPoint((request, response, e) ->
                                write(response, json, ProblemCode.UNAUTHORIZED, "A valid bearer token is required.")))
                .exceptionHandling(handling -> handling.accessDeniedHandler((request, response, e) ->
                        write(response, json, ProblemCode.FORBIDDEN, "This token may not do that.")));
        return http.build();
    }

    /**
     * No observation per security filter: on the purchase path they cost more CPU than the JWT check
     * itself. Requests are still timed as a whole ({@code http.server.requests}).
     */
    @Bean
    SecurityObservationSettings securityObservationSettings() {
        return SecurityObservationSettings.noObservations();
    }

    @Bean
    JwtDecoder jwtDecoder(SecurityProperties properties, Environment environment, Clock clock) {
        return TokenRules.decoder(properties, environment, clock);
    }

    private static void write(HttpServletResponse response, JsonMapper json, ProblemCode code, String detail)
            throws IOException {
        response.setStatus(code.status().value());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        if (code.status() == HttpStatus.UNAUTHORIZED) {
            response.setHeader("WWW-Authenticate", "Bearer");
        }
        json.writeValue(response.getOutputStream(), Problems.of(code, detail));
    }
}
