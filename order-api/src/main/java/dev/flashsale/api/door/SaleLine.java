package dev.flashsale.api.door;

import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.common.stock.SaleLines;
import dev.flashsale.common.stock.SaleLines.Front;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.stereotype.Component;

/**
 * First come, first served: the line of a sale with few units. A shopper's first attempt gets a place in
 * the sale's line, in arrival order across every API instance (one script call: {@link SaleLines#join}).
 * The places before the line's front share the units: such a purchase goes on to the door (a full door
 * lets it wait in arrival order, then answers IN_LINE with its place). A place behind the front is told so
 * (BEYOND_STOCK: the places ahead cover the stock) with its place, the front, and when the front may move
 * on: only once the places ahead have let a whole round pass without taking a unit. The shopper carries the
 * place ({@code Line-Place}) and keeps it on every retry, answered from this instance's reading of the
 * front, without Redis; a purchase without one joins at the back, unless its shopper had a place for that
 * quantity that Redis remembers (the answer that carried it died with its instance). No unit goes to a place further back
 * while a place ahead is still within its round, and nobody is refused before they have a place.
 */
@Component
public class SaleLine implements DisposableBean {

    /** The header a shopper's place in a sale's line travels in, both ways. */
    public static final String PLACE_HEADER = "Line-Place";

    /** Set by {@link DoorFilter} on a purchase it left to the line: it has met no door yet. */
    static final String SERVED_IN_LINE = SaleLine.class.getName() + ".servedInLine";

    /** What the line decided for a purchase. */
    public sealed interface Admission {
        /** The purchase goes on: its place is served and it entered the door, or the sale has no line. */
        record Enter() implements Admission {}

        /** A line answer, 503 with Retry-After: not served yet, or served at a full door. */
        record Wait(ProblemDetail answer, Duration retryAfter) implements Admission {}
    }

    private static final Admission ENTER = new Admission.Enter();

    private final SaleLines lines;
    private final LinePlaces places;
    private final Door door;
    private final KnownRefusals known;
    private final Duration round;
    private final int comeBackRate;
    private final Clock clock;
    private final PlaceBlocks blocks;
    private final LineFronts fronts;
    private final Counter joined;
    private final Counter served;
    private final Counter beyondStock;
    private final Counter doorFull;
    private final Timer joinedFromLine;
    private final Timer joinedFromBlock;

    SaleLine(
            SaleLines lines,
            LinePlaces places,
            Door door,
            KnownRefusals known,
            WaitingLineProperties properties,
            Clock clock,
            MeterRegistry meters) {
        this.lines = lines;
        this.places = places;
        this.door = door;
        this.known = known;
        this.round = properties.round();
        this.comeBackRate = properties.comeBackRate();
        this.blocks = new PlaceBlocks(properties.blockWindow());
        this.clock = clock;
        this.joined = Counter.builder("flashsale.line.joined")
                .description("Places handed out in sales' lines (first attempts)")
                .register(meters);
        this.served = answers(meters, "served");
        this.beyondStock = answers(meters, "beyond_stock");
        this.doorFull = answers(meters, "door_full");
        this.joinedFromLine = joinTimer(meters, "line");
        this.joinedFromBlock = joinTimer(meters, "block");
        this.fronts =
                new LineFronts(lines, round, properties.refresh(), known.maxBuyers(), clock, meters, blocks::forget);
    }

    private static Counter answers(MeterRegistry meters, String answer) {
        return Counter.builder("flashsale.line.answers")
                .description("Purchases of sales served through their line, by what the line answered")
                .tag("answer", answer)
                .register(meters);
    }

    /**
     * Admits a purchase of {@code saleId} through its line, if it has one: a place for the shopper (the one
     * they carry, or a new one at the back), then the door for a place the front serves.
     *
     * @param placeToken the {@code Line-Place} the shopper sent, or null
     * @param keyed whether the purchase has an Idempotency-Key: if its shopper holds or held units of the
     *     sale, a purchase that joins the line now may replay their order, which is answered wherever the
     *     place (even when Redis lost the key's binding: the purchase path asks Postgres)
     * @throws dev.flashsale.api.problem.ApiProblem 400 when the place carried was not issued to this
     *     shopper for this sale and quantity
     */
    public Admission admit(
            HttpServletRequest request,
            HttpServletResponse response,
            long saleId,
            String userId,
            int quantity,
            @Nullable String placeToken,
            boolean keyed) {
        if (request.getAttribute(SERVED_IN_LINE) == null) {
            return ENTER; // the door took it, or it has no line
        }
        long place;
        Front front;
        boolean carried = placeToken != null;
        if (carried) {
            place = places.read(placeToken, saleId, userId, quantity);
            Optional<Front> known = fronts.front(saleId);
            if (known.isEmpty()) {
                return ENTER; // no line in Redis (lost, or the sale is gone): the purchase path answers
            }
            front = known.get();
        } else {
            Optional<SaleLines.Joined> joinedNow;
            try {
                joinedNow = join(saleId, userId, quantity);
            } catch (RuntimeException redisDown) {
                return ENTER; // the purchase path meets Redis down too, and answers it
            }
            if (joinedNow.isEmpty()) {
                return ENTER; // the sale has no state in Redis: the purchase path answers (rebuilt, or 404)
            }
            joined.increment();
            place = joinedNow.get().place();
            front = joinedNow.get().front();
            fronts.remember(saleId, front);
            placeToken = places.issue(saleId, userId, place, quantity);
        }
        // The shopper keeps the place with every answer, the purchase path's problems included.
        response.setHeader(PLACE_HEADER, placeToken);
        if (front.soldOut(quantity)) {
            return ENTER; // no unit can come back: the reserve script answers SOLD_OUT, and it is remembered
        }
        if (!front.serves(place, quantity) && !mayReplay(keyed, carried, saleId, userId)) {
            beyondStock.increment();
            // A shopper told to wait holds no connection meanwhile: thousands wait in a flash sale. (Tomcat
            // closes the connection of every 503 anyway; said here so that it holds on any server.)
            response.setHeader(HttpHeaders.CONNECTION, "close");
            Duration retryAfter = comeBack(front, place);
            return new Admission.Wait(
                    answer(
                            ProblemCode.BEYOND_STOCK,
                            "The places ahead of yours cover the units left. If they give some up, the line moves on"
                                    + " when this round ends: ask again with your Line-Place then.",
                            place,
                            front,
                            placeToken),
                    retryAfter);
        }
        // The filter left this purchase to the line: it has no place at the door yet.
        if (door.enterInTurn(request, saleId).isEmpty() && !known.refusesEveryone(saleId)) {
            doorFull.increment();
            response.setHeader(HttpHeaders.CONNECTION, "close");
            return new Admission.Wait(
                    answer(
                            ProblemCode.IN_LINE,
                            "Your place is served, and the API is at capacity: ask again with your Line-Place after"
                                    + " Retry-After; the place stays yours within this round and the next.",
                            place,
                            front,
                            placeToken),
                    door.retryAfter());
        }
        served.increment();
        return ENTER;
    }

    /**
     * Whether a keyed purchase behind the front may replay an order of the sale (true when nobody can tell:
     * the path answers): its shopper may have bought with a place whose answer they lost. Answered from this
     * instance's reading of the sale's buyers, without Redis, for first attempts and retries alike (most line
     * answers in a crowd). A shopper who bought in the last refresh is not in that reading yet: told to wait,
     * they get the order on their next attempt. Before a first reading, a purchase that joined the line now
     * asks Redis (one command); a place carried back does not, as nothing was bought with a place behind the
     * front.
     */
    private boolean mayReplay(boolean keyed, boolean carried, long saleId, String userId) {
        if (!keyed) {
            return false;
        }
        Optional<Boolean> read = fronts.bought(saleId, userId);
        if (read.isPresent()) {
            return read.get();
        }
        if (carried) {
            return false; // nothing was bought with a place behind the front
        }
        try {
            return lines.boughtBefore(saleId, userId);
        } catch (RuntimeException redisDown) {
            return true;
        }
    }

    /**
     * A place at the back of the sale's line: one script call while a new place may still be served, so that
     * those places follow arrival order across instances exactly, and Redis remembers it as the shopper's (an
     * attempt whose answer died with its instance gets it back); from this instance's block of places once
     * the line reaches past its front ({@link PlaceBlocks#place}).
     */
    private Optional<SaleLines.Joined> join(long saleId, String userId, int quantity) {
        Optional<Front> reading = fronts.known(saleId);
        if (!blocks.enabled()
                || reading.isEmpty()
                || reading.get().next() < reading.get().front()) {
            return joinedFromLine.record(() -> lines.join(saleId, quantity, round, userId));
        }
        return joinedFromBlock.record(() -> blocks.place(
                saleId,
                quantity,
                reading.get(),
                units -> lines.join(saleId, Math.toIntExact(units), round, null),
                () -> lines.join(saleId, quantity, round, userId)));
    }

    /** How long a first attempt took to get its place: {@code from} the line (a script call) or a block. */
    private static Timer joinTimer(MeterRegistry meters, String from) {
        return Timer.builder("flashsale.line.join")
                .description("How long a first attempt took to get its place in a sale's line")
                .tag("from", from)
                .publishPercentiles(0.5, 0.99)
                .register(meters);
    }

    private static ProblemDetail answer(ProblemCode code, String detail, long place, Front front, String token) {
        ProblemDetail problem = Problems.of(code, detail);
        problem.setProperty("place", place);
        problem.setProperty("serving", front.front());
        problem.setProperty("linePlace", token);
        return problem;
    }

    /**
     * When a place behind the front may ask again: when the round ends (by Redis's clock, as this host's
     * clock reads it), the front's earliest move; or in a second when nothing is left and only held units
     * may come back (the answer is then soon final). Spread by how far back the place is, about
     * {@code comeBackRate} places a second, so that a crowd does not come back as one; at most two rounds.
     */
    private Duration comeBack(Front front, long place) {
        long first = front.remaining() == 0
                ? 1_000
                : Math.clamp(front.roundEndMillis() - clock.millis(), 1_000, Math.max(1_000, round.toMillis()));
        long spread = Math.max(0, place - front.front()) * 1_000 / comeBackRate;
        return Duration.ofMillis(Math.min(first + spread, 2 * round.toMillis()));
    }

    /** The sale's line as it stands now, or empty when it has none or Redis cannot tell (for ops, and a first reading). */
    public Optional<Front> read(long saleId) {
        return fronts.read(saleId);
    }

    @Override
    public void destroy() {
        fronts.close();
    }
}
