package dev.flashsale.api.purchase;

/**
 * A request's wait for the group commit round trip that carries its item ran out
 * ({@code app.purchase.*.max-wait}). An item still queued was taken out, so nothing will commit it; one
 * whose round is under way may still be committed: the caller decides its order's fate from the store.
 */
final class Overdue extends RuntimeException {

    private final boolean roundBegun;

    Overdue(String path, boolean wasQueued) {
        super(path + ": no round trip answered in time" + (wasQueued ? " (was still queued)" : ""), null, false, false);
        this.roundBegun = !wasQueued;
    }

    /**
     * Whether a round had taken the item: its reserve may run after the caller stopped waiting, so a record
     * missing now may yet be made.
     */
    boolean roundBegun() {
        return roundBegun;
    }
}
