package dev.flashsale.common.stock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.common.order.OrderIds;
import dev.flashsale.common.order.PurchasePath;
import io.lettuce.core.cluster.SlotHash;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * On Redis Cluster a script, or a command with several keys, is refused (CROSSSLOT) unless its keys share one
 * hash slot. Every script of a sale takes its keys from {@link SaleKeys} (reserve, release and
 * confirm_released: {@link SaleKeys#forReservation}; advance: {@link AdvanceCall#keys}; the rebuild: the sale,
 * its totals, its pending set and its records' hash; the line's scripts: the line and the sale), so each key of a
 * sale must lie in the slot of its hash tag. The shopper's keys (throttle.lua) are checked in order-api's
 * IdempotencyKeysTests.
 */
class SaleKeysTests {

    private static final List<Long> SALES = LongStream.concat(
                    LongStream.rangeClosed(1, 2_000), LongStream.of(Long.MAX_VALUE, 1_000_000_007L))
            .boxed()
            .toList();

    @Test
    void every_key_of_a_sale_lies_in_the_slot_of_its_hash_tag() {
        for (long sale : SALES) {
            SaleKeys keys = new SaleKeys(sale);
            int slot = SlotHash.getSlot("sale:" + sale);
            assertThat(List.of(
                            keys.sale(),
                            keys.users(),
                            keys.pending(),
                            keys.line(),
                            keys.lineShoppers(),
                            keys.orders(),
                            keys.refusals()))
                    .as("sale %d", sale)
                    .allSatisfy(key -> assertThat(SlotHash.getSlot(key)).as(key).isEqualTo(slot));
        }
    }

    @Test
    void the_keys_of_one_reservation_of_one_batch_reserve_and_of_one_batch_advance_share_one_slot() {
        List<UUID> batch = List.of(OrderIds.next(), OrderIds.next(), OrderIds.next());
        for (long sale : SALES) {
            SaleKeys keys = new SaleKeys(sale);
            assertThat(slots(keys.forReservation())).as("sale %d", sale).hasSize(1);
            assertThat(slots(new ReserveCall(
                                    sale,
                                    batch.stream()
                                            .map(id -> new ReserveRequest(
                                                    id, "shopper", 1, PurchasePath.SYNC, Instant.EPOCH, true))
                                            .toList())
                            .keys()))
                    .as("sale %d", sale)
                    .hasSize(1);
            assertThat(slots(new AdvanceCall(
                                    sale, batch, EnumSet.of(ReservationState.RESERVED), ReservationState.PUBLISHED)
                            .keys()))
                    .as("sale %d", sale)
                    .hasSize(1);
        }
    }

    @Test
    void the_sales_spread_over_the_slots_so_a_cluster_shares_them_out_among_its_masters() {
        // The hash tag is the whole "sale:ID": sales with consecutive ids land all over the slot space.
        assertThat(SALES.stream()
                        .map(sale -> SlotHash.getSlot(new SaleKeys(sale).sale()) * 3 / SlotHash.SLOT_COUNT)
                        .distinct())
                .containsExactlyInAnyOrder(0, 1, 2);
        assertThat(slots(SALES.stream().map(sale -> new SaleKeys(sale).sale()).toList()))
                .hasSizeGreaterThan(1_500);
    }

    private static List<Integer> slots(List<String> keys) {
        return keys.stream().map(SlotHash::getSlot).distinct().toList();
    }
}
