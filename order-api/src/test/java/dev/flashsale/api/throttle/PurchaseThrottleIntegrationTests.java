package dev.flashsale.api.throttle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import dev.flashsale.api.mode.AutoPilot;
import dev.flashsale.api.support.Api;
import dev.flashsale.api.support.TestTopology;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;

/** A small throttle of its own (the shared test context lifts it): 3 purchase attempts per 2 s. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"app.throttle.purchases=3", "app.throttle.window=2s"})
@ActiveProfiles("local")
class PurchaseThrottleIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    MeterRegistry meters;

    @MockitoSpyBean
    AutoPilot autoPilot;

    Api api;

    @DynamicPropertySource
    static void isolatedTopology(DynamicPropertyRegistry registry) {
        TestTopology.properties().forEach((key, value) -> registry.add(key, () -> value));
    }

    @BeforeEach
    void client() {
        api = new Api(port);
    }

    @Test
    void a_shopper_beyond_the_limit_gets_429_with_retry_after_and_others_are_not_affected() throws Exception {
        long sale = api.createSale(100, 50);
        String bot = "bot-" + sale;

        List<Api.Response> burst = Api.concurrently(10, i -> api.purchase(sale, bot, 1));

        assertThat(burst.stream().filter(r -> r.status() == 201)).hasSize(3);
        List<Api.Response> limited =
                burst.stream().filter(r -> r.status() == 429).toList();
        assertThat(limited).hasSize(7);
        assertThat(limited).allSatisfy(r -> {
            assertThat(r.code()).isEqualTo("TOO_MANY_REQUESTS");
            assertThat(r.header("Content-Type")).hasValue("application/problem+json");
            assertThat(Long.parseLong(r.header("Retry-After").orElseThrow())).isBetween(1L, 2L);
        });
        assertThat(api.purchase(sale, "patient-" + sale, 1).status()).isEqualTo(201);
        assertThat(redis.getExpire(PurchaseThrottle.key(bot))).isBetween(0L, 2L);

        Thread.sleep(Duration.ofMillis(2100));
        assertThat(api.purchase(sale, bot, 1).status()).isEqualTo(201);
    }

    @Test
    void spraying_fresh_idempotency_keys_cannot_grow_redis_without_bound() throws Exception {
        // Units stay left (a sold-out sale is refused from memory, before the throttle: see the next test).
        long sale = api.createSale(10, 1);
        assertThat(api.purchase(sale, "buyer-" + sale, 1).status()).isEqualTo(201);
        String sprayer = "sprayer-" + sale;

        List<Api.Response> spray =
                Api.concurrently(50, i -> api.purchase(sale, sprayer, 1, "Idempotency-Key", "spray-" + sale + "-" + i));

        // Places 1 to 50 in the sale's line: the 9 before its front (9 units left) meet the throttle, which
        // admits 3; of the 41 behind it, those the line answers touch no key, and those sent once the sprayer
        // holds a unit (a keyed purchase of theirs may be a replay: it skips the line) meet the throttle too.
        assertThat(spray.stream().filter(r -> r.status() != 429 && !r.code().equals("BEYOND_STOCK")))
                .as("admitted by the throttle")
                .hasSize(3);
        assertThat(spray.stream().filter(r -> r.status() == 429)).hasSizeGreaterThanOrEqualTo(6);
        Set<String> written = keysOf(sprayer, sale);
        // per admitted attempt: its Idempotency-Key binding and its record (one reservation, two remembered
        // refusals); plus the counter
        assertThat(written).hasSizeLessThanOrEqualTo(3 * 2 + 1);
        // Each key has a TTL (-1 means none); a short-lived one may already be gone (-2) when it is read.
        assertThat(written)
                .allSatisfy(key -> assertThat(redis.getExpire(key.split("#")[0]))
                        .as("TTL of %s", key)
                        .isNotEqualTo(-1L));
    }

    @Test
    void spraying_a_sold_out_sale_writes_nothing_to_redis() throws Exception {
        long sale = api.createSale(1, 1);
        assertThat(api.purchase(sale, "buyer-" + sale, 1).status()).isEqualTo(201);
        String sprayer = "sold-out-sprayer-" + sale;
        // Once this instance knows who holds the sale's units, a keyed purchase of anyone else is refused
        // from memory.
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            double before = refusedFromMemory();
            String fresh = UUID.randomUUID().toString(); // a shopper of its own: the throttle allows 3
            Api.Response probe = api.purchase(sale, "probe-" + fresh, 1, "Idempotency-Key", fresh);
            assertThat(probe.code()).isEqualTo("SOLD_OUT");
            assertThat(refusedFromMemory()).isEqualTo(before + 1);
        });

        List<Api.Response> spray =
                Api.concurrently(50, i -> api.purchase(sale, sprayer, 1, "Idempotency-Key", "spray-" + sale + "-" + i));

        assertThat(spray).allSatisfy(r -> assertThat(r.code()).isEqualTo("SOLD_OUT"));
        assertThat(keysOf(sprayer, sale)).isEmpty();
    }

    private double refusedFromMemory() {
        return meters.get("flashsale.refusals.known")
                .tag("code", "SOLD_OUT")
                .counter()
                .count();
    }

    @Test
    void a_shopper_found_over_the_limit_is_refused_from_memory_and_is_no_arrival_of_the_crowd_that_auto_weighs()
            throws Exception {
        long sale = api.createSale(100, 50);
        String bot = "crowd-bot-" + sale;
        // Sent together, the ten ride the reserve calls that count them (one Redis master) until the first comes
        // back THROTTLED; those sent after that are refused from memory.
        List<Api.Response> burst = Api.concurrently(
                10,
                i -> i % 2 == 0
                        ? api.purchase(sale, bot, 1)
                        : api.purchase(sale, bot, 1, "Idempotency-Key", "crowd-" + sale + "-" + i));
        assertThat(burst.stream().filter(r -> r.status() == 429)).hasSize(7);
        String counted = redis.opsForValue().get(PurchaseThrottle.key(bot));
        assertThat(Integer.parseInt(counted)).isBetween(4, 10);
        clearInvocations(autoPilot);

        List<Api.Response> more = Api.concurrently(
                6,
                i -> i % 2 == 0
                        ? api.purchase(sale, bot, 1)
                        : api.purchase(sale, bot, 1, "Idempotency-Key", "more-" + sale + "-" + i));

        // Within the window the bot is refused before any path or Redis call: AUTO never saw them arrive, and
        // Redis never counted them.
        assertThat(more).allSatisfy(r -> {
            assertThat(r.status()).isEqualTo(429);
            assertThat(Long.parseLong(r.header("Retry-After").orElseThrow())).isBetween(1L, 2L);
        });
        verify(autoPilot, never()).arrived();
        assertThat(redis.opsForValue().get(PurchaseThrottle.key(bot))).isEqualTo(counted);
    }

    @Test
    void attempts_at_a_sale_that_does_not_exist_are_counted_too() throws Exception {
        String prober = "prober-" + System.nanoTime();
        long unknown = Long.MAX_VALUE - 1;

        List<Api.Response> probes = Api.concurrently(
                10,
                i -> i % 2 == 0
                        ? api.purchase(unknown, prober, 1)
                        : api.purchase(unknown, prober, 1, "Idempotency-Key", "p-" + i));

        assertThat(probes.stream().filter(r -> r.status() == 404)).hasSize(3);
        assertThat(probes.stream().filter(r -> r.status() == 429)).hasSize(7);
    }

    @Test
    void a_key_bound_with_the_attempts_count_is_unbound_when_the_request_is_invalid() throws Exception {
        long sale = api.createSale(10, 2);
        String shopper = "corrector-" + sale;
        String key = "fix-" + sale;

        assertThat(api.purchase(Long.MAX_VALUE - 1, shopper, 1, "Idempotency-Key", key)
                        .code())
                .isEqualTo("SALE_NOT_FOUND");
        assertThat(api.purchase(sale, shopper, 3, "Idempotency-Key", key).code())
                .isEqualTo("VALIDATION_FAILED");
        assertThat(scan("idem:" + PurchaseThrottle.shopperTag(shopper) + ":*")).isEmpty();

        // Neither refusal held the key: corrected, it buys (not 422 for a key used for another purchase).
        assertThat(api.purchase(sale, shopper, 2, "Idempotency-Key", key).status())
                .isEqualTo(201);
        assertThat(scan("idem:" + PurchaseThrottle.shopperTag(shopper) + ":*")).hasSize(1);
    }

    private Set<String> keysOf(String user, long sale) {
        Set<String> keys = new java.util.HashSet<>();
        keys.addAll(scan("idem:" + PurchaseThrottle.shopperTag(user) + ":*"));
        keys.addAll(scan(PurchaseThrottle.key(user)));
        // A record is a field of one of the sale's two hashes (state:mode:code:qty:created:user), named here
        // as hash#orderId.
        for (String hash : List.of("{sale:" + sale + "}:orders", "{sale:" + sale + "}:refusals")) {
            redis.<String, String>opsForHash().entries(hash).forEach((orderId, record) -> {
                if (record.split(":", 6)[5].equals(user)) {
                    keys.add(hash + "#" + orderId);
                }
            });
        }
        return keys;
    }

    private Set<String> scan(String pattern) {
        try (var cursor = redis.scan(org.springframework.data.redis.core.ScanOptions.scanOptions()
                .match(pattern)
                .count(1000)
                .build())) {
            return cursor.stream().collect(Collectors.toSet());
        }
    }
}
