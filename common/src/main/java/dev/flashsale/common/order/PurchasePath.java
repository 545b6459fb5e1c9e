package dev.flashsale.common.order;

/** The path that took an order: inside the request (SYNC) or through the queue (ASYNC). */
public enum PurchasePath {
    SYNC,
    ASYNC
}
