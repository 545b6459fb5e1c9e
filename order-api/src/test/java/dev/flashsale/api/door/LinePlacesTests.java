package dev.flashsale.api.door;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.security.SecurityProperties;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LinePlacesTests {

    private static final String SECRET = "a-test-secret-of-at-least-32-bytes-long";

    private final LinePlaces places = places(SECRET);

    private static LinePlaces places(String secret) {
        return new LinePlaces(new SecurityProperties(secret, null, null, Duration.ofSeconds(30)));
    }

    @Test
    void a_place_reads_back_for_its_shopper_sale_and_quantity() {
        String token = places.issue(42, "alice", 1_234, 2);

        assertThat(places.read(token, 42, "alice", 2)).isEqualTo(1_234);
    }

    @Test
    void a_place_cannot_be_handed_on_moved_or_forged() {
        String token = places.issue(42, "alice", 1_234, 1);

        assertThat(java.util.List.of(
                        () -> places.read(token, 42, "bob", 1),
                        () -> places.read(token, 43, "alice", 1),
                        () -> places.read(token, 42, "alice", 2),
                        () -> places.read(token.replace(".1234.", ".0."), 42, "alice", 1),
                        () -> places.read(places(SECRET + "-other").issue(42, "alice", 0, 1), 42, "alice", 1),
                        () -> places.read("not a place", 42, "alice", 1),
                        (Runnable) () -> places.read("42.0.1.%%%", 42, "alice", 1)))
                .allSatisfy(misuse -> assertThatThrownBy(misuse::run)
                        .isInstanceOfSatisfying(
                                ApiProblem.class,
                                problem -> assertThat(problem.code()).isEqualTo(ProblemCode.LINE_PLACE_INVALID)));
    }
}
