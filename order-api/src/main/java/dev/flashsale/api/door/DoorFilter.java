package dev.flashsale.api.door;

import com.netflix.concurrency.limits.Limiter;
import dev.flashsale.api.PurchaseRoute;
import dev.flashsale.api.input.Preference;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import dev.flashsale.api.refusal.KnownRefusals;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import tools.jackson.databind.json.JsonMapper;

/**
 * Puts every purchase through the {@link Door} and gives its place up when the request ends. A purchase of
 * a sale served through its line first gets its place in that line, after the token is checked: it meets
 * the door in {@link SaleLine}, and only if its place is served, so that nobody is refused before they have
 * a place. Any other purchase meets the door here, ahead of everything else, and a full door refuses it at
 * once with 503, code UNAVAILABLE and Retry-After, before the token is checked or anything is reserved.
 *
 * <p>{@code Prefer: wait} purchases wait on purpose: their latency is not sampled, and once taken they give
 * their place up while they wait for the order ({@link DoorPlace}). Purchases this instance refuses from
 * memory pass by (see {@link KnownRefusals}): a refusal that costs what a ping costs is no load.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1)
class DoorFilter extends OncePerRequestFilter {

    private final Door door;
    private final KnownRefusals known;
    private final byte[] refusal;
    private final String retryAfter;

    DoorFilter(Door door, KnownRefusals known, JsonMapper json) {
        this.door = door;
        this.known = known;
        this.refusal = json.writeValueAsBytes(Problems.of(
                ProblemCode.UNAVAILABLE,
                "The API is at capacity; nothing was reserved. Retry after the time in Retry-After."));
        this.retryAfter = Problems.seconds(door.retryAfter());
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String uri = request.getRequestURI();
        if (!door.enabled() || !"POST".equals(request.getMethod()) || !PurchaseRoute.matches(uri)) {
            return true;
        }
        long saleId = PurchaseRoute.saleOf(uri);
        return saleId >= 0 && known.refusesEveryone(saleId);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long saleId = PurchaseRoute.saleOf(request.getRequestURI());
        if (door.servesInLine(saleId)) {
            request.setAttribute(SaleLine.SERVED_IN_LINE, Boolean.TRUE);
        } else if (door.enter(request).isEmpty()) {
            refuse(response);
            return;
        }
        boolean done = false;
        try {
            chain.doFilter(request, response);
            done = true;
        } finally {
            DoorPlace place = DoorPlace.of(request);
            if (place == null) {
                // a line answer, or a refusal: it never took a place
            } else if (!done || waitsOnPurpose(request)) {
                place.end(Limiter.Listener::onIgnore);
            } else if (response.getStatus() >= 500) {
                place.end(Limiter.Listener::onDropped);
            } else {
                place.end(Limiter.Listener::onSuccess);
            }
        }
    }

    private void refuse(HttpServletResponse response) throws IOException {
        response.setStatus(HttpStatus.SERVICE_UNAVAILABLE.value());
        response.setHeader(HttpHeaders.RETRY_AFTER, retryAfter);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setContentLength(refusal.length);
        response.getOutputStream().write(refusal);
    }

    private static boolean waitsOnPurpose(HttpServletRequest request) {
        return Preference.parse(Collections.list(request.getHeaders("Prefer"))).waitFor() != null;
    }
}
