package dev.flashsale.worker.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.flashsale.worker.OrderMessages;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

class DelayedRetryTests {

    @Test
    void counts_a_message_without_the_attempt_header_as_the_first_attempt() {
        assertThat(DelayedRetry.attemptOf(new Message(new byte[0], new MessageProperties())))
                .isEqualTo(1);
    }

    @Test
    void reads_the_attempt_from_the_header_whatever_number_type_the_broker_returns() {
        MessageProperties asInteger = new MessageProperties();
        asInteger.setHeader(OrderMessages.ATTEMPT_HEADER, 3);
        MessageProperties asLong = new MessageProperties();
        asLong.setHeader(OrderMessages.ATTEMPT_HEADER, 7L);

        assertThat(DelayedRetry.attemptOf(new Message(new byte[0], asInteger))).isEqualTo(3);
        assertThat(DelayedRetry.attemptOf(new Message(new byte[0], asLong))).isEqualTo(7);
    }

    @Test
    void ignores_an_attempt_header_that_is_not_a_positive_number() {
        MessageProperties text = new MessageProperties();
        text.setHeader(OrderMessages.ATTEMPT_HEADER, "two");
        MessageProperties zero = new MessageProperties();
        zero.setHeader(OrderMessages.ATTEMPT_HEADER, 0);

        assertThat(DelayedRetry.attemptOf(new Message(new byte[0], text))).isEqualTo(1);
        assertThat(DelayedRetry.attemptOf(new Message(new byte[0], zero))).isEqualTo(1);
    }
}
