package dev.flashsale.api.purchase;

import static org.hamcrest.Matchers.hasSize;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import dev.flashsale.api.door.SaleLine;
import dev.flashsale.api.input.Preference;
import dev.flashsale.api.problem.ApiProblem;
import dev.flashsale.api.problem.ProblemCode;
import dev.flashsale.api.problem.Problems;
import dev.flashsale.api.refusal.KnownRefusals;
import dev.flashsale.api.status.OrderView;
import dev.flashsale.common.order.OrderStatus;
import dev.flashsale.common.order.PurchasePath;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The purchase endpoint at the web layer only, as petclinic tests its controllers: the answers' statuses,
 * headers and bodies, with the services behind the controller mocked. The request filters (the door, the
 * body limit), the bearer token and the ops console (security filter chains) are left to the integration
 * tests: left out of the slice, filters off, and the shopper comes as the request's principal.
 */
@WebMvcTest(
        controllers = PurchaseController.class,
        excludeFilters = {
            @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = OncePerRequestFilter.class),
            @ComponentScan.Filter(type = FilterType.REGEX, pattern = "dev\\.flashsale\\.api\\.ops\\..*")
        })
@AutoConfigureMockMvc(addFilters = false)
class PurchaseControllerTests {

    private static final long SALE = 7;
    private static final UUID ORDER = UUID.fromString("01970000-0000-7000-8000-000000000001");
    private static final Instant AT = Instant.parse("2026-11-28T04:00:00Z");

    @Autowired
    private MockMvc mvc;

    @MockitoBean
    private Purchases purchases;

    @MockitoBean
    private PreferWait preferWait;

    @MockitoBean
    private KnownRefusals known;

    @MockitoBean
    private PurchaseProperties properties;

    @MockitoBean
    private SaleLine line;

    @BeforeEach
    void a_sale_without_a_line() {
        given(line.admit(any(), any(), anyLong(), anyString(), anyInt(), any(), anyBoolean()))
                .willReturn(new SaleLine.Admission.Enter());
        given(properties.pollAfter()).willReturn(Duration.ofSeconds(1));
    }

    @Test
    void a_sync_purchase_answers_201_with_the_confirmed_order_and_its_location() throws Exception {
        given(purchases.purchase(eq(SALE), eq("alice"), eq(2), isNull(), any(Preference.class)))
                .willReturn(outcome(OrderStatus.CONFIRMED, PurchasePath.SYNC, HttpStatus.CREATED));

        mvc.perform(purchase("{\"quantity\": 2}"))
                .andExpect(status().isCreated())
                .andExpect(header().string("Location", "/api/v1/orders/" + ORDER))
                .andExpect(header().doesNotExist("Retry-After"))
                .andExpect(jsonPath("$.orderId").value(ORDER.toString()))
                .andExpect(jsonPath("$.status").value("CONFIRMED"))
                .andExpect(jsonPath("$.mode").value("SYNC"))
                .andExpect(jsonPath("$.userId").doesNotExist());
    }

    @Test
    void an_async_purchase_answers_202_with_its_location_and_when_to_poll() throws Exception {
        given(purchases.purchase(eq(SALE), eq("alice"), eq(1), isNull(), any(Preference.class)))
                .willReturn(outcome(OrderStatus.QUEUED, PurchasePath.ASYNC, HttpStatus.ACCEPTED));

        mvc.perform(purchase("{\"quantity\": 1}"))
                .andExpect(status().isAccepted())
                .andExpect(header().string("Location", "/api/v1/orders/" + ORDER))
                .andExpect(header().string("Retry-After", "1"))
                .andExpect(jsonPath("$.status").value("QUEUED"))
                .andExpect(jsonPath("$.mode").value("ASYNC"));
    }

    @Test
    void a_sold_out_sale_answers_409_problem_json_with_its_code() throws Exception {
        given(purchases.purchase(eq(SALE), eq("alice"), eq(1), isNull(), any(Preference.class)))
                .willThrow(ApiProblem.refused(ProblemCode.SOLD_OUT));

        mvc.perform(purchase("{\"quantity\": 1}"))
                .andExpect(status().isConflict())
                .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.code").value("SOLD_OUT"))
                .andExpect(jsonPath("$.status").value(409));
    }

    @Test
    void a_sale_known_sold_out_is_answered_409_from_memory_without_a_purchase() throws Exception {
        given(known.refusal(SALE, "alice", 1, false)).willReturn(ApiProblem.refused(ProblemCode.SOLD_OUT));

        mvc.perform(purchase("{\"quantity\": 1}"))
                .andExpect(status().isConflict())
                .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.code").value("SOLD_OUT"));
        verifyNoInteractions(purchases);
    }

    @Test
    void a_quantity_out_of_range_answers_400_problem_json_naming_the_field() throws Exception {
        mvc.perform(purchase("{\"quantity\": 0}"))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.code").value("VALIDATION_FAILED"))
                .andExpect(jsonPath("$.errors", hasSize(1)))
                .andExpect(jsonPath("$.errors[0].field").value("quantity"));
        verifyNoInteractions(purchases);
    }

    @Test
    void an_idempotency_key_that_is_not_visible_ascii_answers_400_problem_json() throws Exception {
        mvc.perform(purchase("{\"quantity\": 1}").header("Idempotency-Key", "two words"))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.code").value("VALIDATION_FAILED"));
        verifyNoInteractions(purchases);
    }

    @Test
    void a_replay_of_an_idempotency_key_answers_the_original_order() throws Exception {
        given(purchases.purchase(eq(SALE), eq("alice"), eq(1), eq("key-1"), any(Preference.class)))
                .willReturn(outcome(OrderStatus.CONFIRMED, PurchasePath.SYNC, HttpStatus.CREATED));

        for (int attempt = 0; attempt < 2; attempt++) {
            mvc.perform(purchase("{\"quantity\": 1}").header("Idempotency-Key", "key-1"))
                    .andExpect(status().isCreated())
                    .andExpect(header().string("Location", "/api/v1/orders/" + ORDER))
                    .andExpect(jsonPath("$.orderId").value(ORDER.toString()));
        }
    }

    @Test
    void a_place_behind_the_front_of_the_line_answers_503_with_when_to_come_back() throws Exception {
        given(line.admit(any(), any(), anyLong(), anyString(), anyInt(), any(), anyBoolean()))
                .willReturn(new SaleLine.Admission.Wait(
                        Problems.of(ProblemCode.BEYOND_STOCK, "Your place is beyond the stock."),
                        Duration.ofSeconds(5)));

        mvc.perform(purchase("{\"quantity\": 1}"))
                .andExpect(status().isServiceUnavailable())
                .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(header().string("Retry-After", "5"))
                .andExpect(jsonPath("$.code").value("BEYOND_STOCK"));
        verifyNoInteractions(purchases);
    }

    private static MockHttpServletRequestBuilder purchase(String body) {
        return post("/api/v1/sales/{saleId}/orders", SALE)
                .principal(new TestingAuthenticationToken("alice", null, "SCOPE_orders"))
                .contentType(MediaType.APPLICATION_JSON)
                .accept(MediaType.APPLICATION_JSON)
                .content(body);
    }

    private static PurchaseOutcome outcome(OrderStatus status, PurchasePath path, HttpStatus answer) {
        return new PurchaseOutcome(new OrderView(ORDER, SALE, 1, status, path, AT, AT, null, "alice"), answer, null);
    }
}
