package dev.flashsale.api;

/**
 * The purchase endpoint's path, in one place: the controller maps it, the door reads a sale id from it
 * before anything else runs, the latency metric and the OpenAPI document recognise it, and the warm-up
 * calls it.
 */
public final class PurchaseRoute {

    /** The URI template, as the controller maps it and as metrics and OpenAPI name it. */
    public static final String TEMPLATE = "/api/v1/sales/{saleId}/orders";

    private static final String BEFORE = "/api/v1/sales/";
    private static final String AFTER = "/orders";

    private PurchaseRoute() {}

    /** The path of a purchase of {@code saleId}. */
    public static String of(long saleId) {
        return BEFORE + saleId + AFTER;
    }

    /** Whether {@code uri} has the purchase's shape, whatever stands for the sale id. */
    public static boolean matches(String uri) {
        return uri.startsWith(BEFORE) && uri.endsWith(AFTER);
    }

    /** The sale id of a purchase's path, or -1 when it has none (read by hand: it runs per request). */
    public static long saleOf(String uri) {
        if (!matches(uri)) {
            return -1;
        }
        try {
            return Long.parseLong(uri, BEFORE.length(), uri.length() - AFTER.length(), 10);
        } catch (NumberFormatException | IndexOutOfBoundsException notASale) {
            return -1;
        }
    }
}
