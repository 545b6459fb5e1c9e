package dev.flashsale.common.order;

import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/** JSON form of {@link OrderRequested} on the wire; anything that does not decode is malformed. */
@Component
public class OrderRequestedCodec {

    public static final String CONTENT_TYPE = "application/json";

    private final JsonMapper json;

    public OrderRequestedCodec(JsonMapper json) {
        this.json = json;
    }

    public byte[] encode(OrderRequested message) {
        return json.writeValueAsBytes(message);
    }

    public OrderRequested decode(byte[] body) {
        try {
            OrderRequested message = json.readValue(body, OrderRequested.class);
            if (message == null) {
                throw new MalformedMessageException("empty body", null);
            }
            return message;
        } catch (JacksonException | IllegalArgumentException | NullPointerException e) {
            throw new MalformedMessageException(
                    "not an OrderRequested: " + e.getClass().getSimpleName(), e);
        }
    }

    public static class MalformedMessageException extends RuntimeException {
        MalformedMessageException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
