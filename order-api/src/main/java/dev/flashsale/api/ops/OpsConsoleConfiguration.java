package dev.flashsale.api.ops;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.servlet.config.annotation.ViewControllerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The console itself is static content anyone may load: it holds no data. Every number it shows comes
 * from the admin JSON endpoints, with the admin token the operator pastes in. Its content security
 * policy allows only its own script and style, and calls to its own origin.
 */
@Configuration(proxyBeanMethods = false)
class OpsConsoleConfiguration implements WebMvcConfigurer {

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    SecurityFilterChain opsConsole(HttpSecurity http) throws Exception {
        http.securityMatcher("/ops", "/ops/**")
                .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
                .csrf(csrf -> csrf.disable())
                .sessionManagement(session -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .headers(headers -> headers.contentSecurityPolicy(csp -> csp.policyDirectives(
                        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
                                + " connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")));
        return http.build();
    }

    @Override
    public void addViewControllers(ViewControllerRegistry registry) {
        registry.addRedirectViewController("/ops", "/ops/");
        registry.addViewController("/ops/").setViewName("forward:/ops/index.html");
    }
}
