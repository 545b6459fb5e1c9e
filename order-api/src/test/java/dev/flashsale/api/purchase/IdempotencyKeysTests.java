package dev.flashsale.api.purchase;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.api.throttle.PurchaseThrottle;
import io.lettuce.core.cluster.SlotHash;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IdempotencyKeysTests {

    @Test
    void no_two_pairs_of_user_and_key_share_a_redis_key() {
        List<String> parts = List.of(
                "", "u", ":", "u:", ":k", "u:k1", "k1:k2", "k2", "1:u", "idem:u", "u:k1:k2", "}", "u}", "{u", "}:k",
                "{}");
        Map<String, String> seen = new HashMap<>();
        for (String user : parts) {
            if (user.isEmpty()) {
                continue; // no token has an empty subject
            }
            for (String key : parts) {
                if (key.isEmpty()) {
                    continue; // an Idempotency-Key has at least one character
                }
                String pair = user + " / " + key;
                String previous = seen.put(IdempotencyKeys.redisKey(user, key), pair);
                assertThat(previous).as("%s collides with %s", pair, previous).isNull();
            }
        }
    }

    /** The throttle's script binds the key while it counts the attempt: on Redis Cluster, one slot. */
    @Test
    void a_shoppers_binding_shares_the_hash_slot_of_the_shoppers_attempt_counter() {
        for (String user : List.of("u", "u}", "}u", "{u}", "a}b{c}", "user-42", "é")) {
            for (String key : List.of("k", "}", "{k}", "order-1")) {
                assertThat(SlotHash.getSlot(IdempotencyKeys.redisKey(user, key)))
                        .as("user %s, key %s", user, key)
                        .isEqualTo(SlotHash.getSlot(PurchaseThrottle.key(user)));
            }
        }
        assertThat(SlotHash.getSlot(PurchaseThrottle.key("a")))
                .isNotEqualTo(SlotHash.getSlot(PurchaseThrottle.key("b")));
    }
}
