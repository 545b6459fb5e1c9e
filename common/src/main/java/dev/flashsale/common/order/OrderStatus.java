package dev.flashsale.common.order;

/** What a shopper sees of an order. */
public enum OrderStatus {
    /** Accepted and holding stock; the worker has not written it yet. */
    QUEUED,
    CONFIRMED,
    /** The database could not honour it (for example its stock was gone); nothing is held. */
    REJECTED,
    /** Retries were exhausted; nothing is held and the message went to the dead-letter queue. */
    FAILED;

    public boolean isFinal() {
        return this != QUEUED;
    }
}
