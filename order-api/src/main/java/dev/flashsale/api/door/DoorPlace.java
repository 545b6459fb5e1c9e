package dev.flashsale.api.door;

import com.netflix.concurrency.limits.Limiter;
import jakarta.servlet.http.HttpServletRequest;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A purchase's place at the door ({@link Door}), given up once: when its request ends, or
 * earlier when the purchase was taken and from then on only waits for its order ({@code Prefer: wait}), so
 * that waiting shoppers do not keep newcomers out.
 */
public final class DoorPlace {

    private static final String ATTRIBUTE = DoorPlace.class.getName();

    private final Limiter.Listener listener;
    private final WaitingLine line;
    private final AtomicBoolean left = new AtomicBoolean();

    private DoorPlace(Limiter.Listener listener, WaitingLine line) {
        this.listener = listener;
        this.line = line;
    }

    static DoorPlace take(HttpServletRequest request, Limiter.Listener listener, WaitingLine line) {
        DoorPlace place = new DoorPlace(listener, line);
        request.setAttribute(ATTRIBUTE, place);
        return place;
    }

    /** The place this request took at the door, or null. */
    static @Nullable DoorPlace of(HttpServletRequest request) {
        return request.getAttribute(ATTRIBUTE) instanceof DoorPlace place ? place : null;
    }

    /** The request's purchase was taken and now only waits: its place goes to the next one, unsampled. */
    public static void leave(HttpServletRequest request) {
        if (request.getAttribute(ATTRIBUTE) instanceof DoorPlace place) {
            place.end(Limiter.Listener::onIgnore);
        }
    }

    /** Gives the place up with this outcome for the limit, unless it was given up before. */
    void end(Consumer<Limiter.Listener> outcome) {
        if (left.compareAndSet(false, true)) {
            outcome.accept(listener);
            line.wakeHead();
        }
    }
}
