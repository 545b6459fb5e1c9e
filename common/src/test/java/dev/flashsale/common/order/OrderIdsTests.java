package dev.flashsale.common.order;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class OrderIdsTests {

    @Test
    void an_order_id_carries_its_sale_across_the_32_bit_range() {
        for (long sale : List.of(0L, 1L, 7L, 1_000_000_007L, 0x8000_0000L, 0xFFFF_FFFFL)) {
            UUID id = OrderIds.next(sale);
            assertThat(id.version()).as("version of %s", id).isEqualTo(8);
            assertThat(id.variant()).as("variant of %s", id).isEqualTo(2);
            assertThat(OrderIds.saleOf(id)).as("sale of %s", id).isEqualTo(OptionalLong.of(sale));
        }
    }

    @Test
    void a_sale_beyond_32_bits_and_an_id_of_no_sale_carry_none() {
        assertThat(OrderIds.saleOf(OrderIds.next(0x1_0000_0000L))).isEmpty();
        assertThat(OrderIds.saleOf(OrderIds.next())).isEmpty();
        assertThat(OrderIds.saleOf(UUID.randomUUID())).isEmpty();
    }

    @Test
    void ids_of_one_sale_stay_unique_and_in_time_order() {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            ids.add(OrderIds.next(42));
        }
        assertThat(new HashSet<>(ids)).hasSize(ids.size());
        // The first 48 bits are the millisecond: never going back.
        for (int i = 1; i < ids.size(); i++) {
            assertThat(ids.get(i).getMostSignificantBits() >>> 16)
                    .isGreaterThanOrEqualTo(ids.get(i - 1).getMostSignificantBits() >>> 16);
        }
    }
}
