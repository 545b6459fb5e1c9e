package dev.flashsale.worker.reconcile;

/**
 * What one pass changed: Redis followed Postgres, units went back unwritten, orders were closed FAILED; and
 * the messages it published for orders their API left unpublished, each confirmed by the broker (their records
 * stay pending, PUBLISHED, until a worker writes them).
 */
record Pass(int settled, int released, int failed, int published) {

    static final Pass NOTHING = new Pass(0, 0, 0, 0);

    Pass(int settled, int released, int failed) {
        this(settled, released, failed, 0);
    }

    Pass plus(Pass other) {
        return new Pass(
                settled + other.settled, released + other.released, failed + other.failed, published + other.published);
    }

    /**
     * The reservations that left the pass's reading: settled ones left the pending set, published ones were
     * dated anew (by the publication, or by a worker's claim before it), so a page read again skips them.
     */
    int changed() {
        return settled + released + failed + published;
    }
}
