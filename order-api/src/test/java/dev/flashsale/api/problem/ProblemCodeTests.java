package dev.flashsale.api.problem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;

class ProblemCodeTests {

    @Test
    void every_code_on_the_wire_is_its_constants_name_and_every_type_is_about_blank() {
        assertThat(ProblemCode.values())
                .allSatisfy(code -> assertThat(code.code()).isEqualTo(code.name()))
                .allSatisfy(code -> assertThat(code.type()).isEqualTo(URI.create("about:blank")));
        assertThat(Arrays.stream(ProblemCode.values()).map(ProblemCode::code).distinct())
                .hasSize(ProblemCode.values().length);
    }

    @Test
    void a_status_without_a_code_of_its_own_gets_the_code_of_its_class() {
        assertThat(ProblemCode.forStatus(HttpStatus.BAD_REQUEST)).isEqualTo(ProblemCode.MALFORMED_REQUEST);
        assertThat(ProblemCode.forStatus(HttpStatus.SERVICE_UNAVAILABLE)).isEqualTo(ProblemCode.UNAVAILABLE);
        assertThat(ProblemCode.forStatus(HttpStatus.CONFLICT)).isEqualTo(ProblemCode.BAD_REQUEST);
        assertThat(ProblemCode.forStatus(HttpStatusCode.valueOf(502))).isEqualTo(ProblemCode.INTERNAL_ERROR);
    }

    @Test
    void the_stores_refusal_codes_become_409_problems_with_their_own_detail() {
        ApiProblem limit = ApiProblem.refused(ProblemCode.refusal("PURCHASE_LIMIT_REACHED"));

        assertThat(limit.status()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(limit.code()).isEqualTo(ProblemCode.PURCHASE_LIMIT_REACHED);
        assertThat(limit.getMessage()).isEqualTo("This purchase would exceed your limit for the sale.");
        assertThat(ApiProblem.refused(ProblemCode.refusal("SOLD_OUT")).getMessage())
                .isEqualTo("The sale is sold out.");
        assertThatThrownBy(() -> ProblemCode.refusal("REBUILDING")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void every_refusal_the_reserve_script_can_return_has_a_problem_code() throws Exception {
        // An unmapped code would answer 500: a code added to the script must be added to the enum too.
        String script = new String(
                new ClassPathResource("redis/reserve.lua").getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        List<String> refusals = Pattern.compile("refuse\\('([A-Z_]+)'\\)")
                .matcher(script)
                .results()
                .map(match -> match.group(1))
                .toList();

        assertThat(refusals).containsExactlyInAnyOrder("SALE_NOT_ACTIVE", "SOLD_OUT", "PURCHASE_LIMIT_REACHED");
        assertThat(refusals)
                .allSatisfy(code -> assertThat(ProblemCode.refusal(code).code()).isEqualTo(code));
    }
}
