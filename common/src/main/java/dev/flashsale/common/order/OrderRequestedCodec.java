package dev.flashsale.common.order;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON forms of the message contract on the wire, told apart by content type: version 1 is one
 * {@link OrderRequested} ({@value #CONTENT_TYPE}), version 2 an {@link OrderBatch}
 * ({@value #BATCH_CONTENT_TYPE}). A worker reads both, so API instances of either version can publish
 * during a rolling deployment. Anything that does not decode is malformed.
 */
@Component
public class OrderRequestedCodec {

    public static final String CONTENT_TYPE = "application/json";
    public static final String BATCH_CONTENT_TYPE = "application/vnd.flashsale.order-batch.v2+json";

    private final JsonMapper json;

    public OrderRequestedCodec(JsonMapper json) {
        this.json = json;
    }

    public byte[] encode(OrderRequested message) {
        return json.writeValueAsBytes(message);
    }

    public byte[] encode(OrderBatch batch) {
        return json.writeValueAsBytes(batch);
    }

    public OrderRequested decode(byte[] body) {
        return read(body, OrderRequested.class);
    }

    /** The orders a message carries, by its content type (none or {@value #CONTENT_TYPE}: version 1). */
    public List<OrderRequested> decodeAll(byte[] body, @Nullable String contentType) {
        if (BATCH_CONTENT_TYPE.equals(contentType)) {
            return read(body, OrderBatch.class).orders();
        }
        return List.of(decode(body));
    }

    private <T> T read(byte[] body, Class<T> type) {
        try {
            T message = json.readValue(body, type);
            if (message == null) {
                throw new MalformedMessageException("empty body", null);
            }
            return message;
        } catch (JacksonException | IllegalArgumentException | NullPointerException e) {
            throw new MalformedMessageException(
                    "not an " + type.getSimpleName() + ": " + e.getClass().getSimpleName(), e);
        }
    }

    public static class MalformedMessageException extends RuntimeException {
        MalformedMessageException(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }
}
