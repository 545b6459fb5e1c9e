package dev.flashsale.worker.reconcile;

/** What one pass changed: Redis followed Postgres, units went back unwritten, orders were closed FAILED. */
record Pass(int settled, int released, int failed) {

    static final Pass NOTHING = new Pass(0, 0, 0);

    Pass plus(Pass other) {
        return new Pass(settled + other.settled, released + other.released, failed + other.failed);
    }

    int changed() {
        return settled + released + failed;
    }
}
