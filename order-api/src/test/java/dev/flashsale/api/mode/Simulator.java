package dev.flashsale.api.mode;

import dev.flashsale.api.door.MedianLimit;
import dev.flashsale.common.order.PurchasePath;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * A deterministic discrete-event model of one API instance on the bench box, for AUTO's controller to run
 * against on a simulated clock. It stands in for the world only: the box's cores, what each step of a
 * purchase costs them, Postgres and the broker with their round trips, the load generator beside the
 * apps. What belongs to the instance is the instance's: the real door ({@link MedianLimit}), the
 * real bulkhead, the group commits and the routing as {@code GroupCommit} and {@code Purchases} do them
 * (modelled here: they are threads and futures), and the controller under test, fed what it is fed in
 * production (arrivals, each path's back half, whole answers, the CPU load, the door's refusals, its meters
 * on the meters' clock).
 *
 * <p>The costs, all processes of the box per order (ms), are the bench's at {@code aa11ba3}
 * (docs/results/bench/bench-20261126T042703Z-aa11ba3.txt, "CPU per order": SYNC 0.93 = api 0.59, redis 0.17,
 * postgres 0.16; ASYNC 1.24 = api 0.73, redis 0.20, rabbitmq 0.13, postgres 0.11, worker 0.08; the run at
 * {@code 8714dd8}, docs/results/bench/bench-20261125T134248Z-8714dd8.txt, had 0.77 and 1.40), split by where the
 * work happens. A refusal at the door costs a ping's 0.13. The load generator shares the box: 0.30 ms per
 * arrival puts the saturation of SYNC at 2 / (0.93 + 0.30) = 1,626/s and of ASYNC at 2 / (1.24 + 0.30) =
 * 1,299/s, the bench's 1,658 and 1,293/s. A SYNC commit is five Postgres round trips (the seeds sweep,
 * docs/results/seeds/seeds-20261125T085459Z/summary.md: SYNC's median 33, 103, 239 ms at 5, 20, 50 ms of latency
 * per round trip). The CPU is one FIFO queue served by the cores. Each step that waits for a core also waits
 * for the scheduler: with the threads of the purchases in flight runnable among five processes, a woken
 * thread waits (exponentially distributed) {@link #QUANTUM_MS} per purchase in flight per core before it
 * runs. That puts the knees (p99 under 50 ms) near the bench's, SYNC 878/s and ASYNC 686/s
 * ({@code SimulatorGridTests} checks the simulator's own). Nothing here is random but the arrivals and those waits, each drawn from a
 * generator seeded by the run. Re-measure the costs when the code changes (load-tests/run.sh bench).
 */
final class Simulator {

    /** CPU per order by step, ms, all processes. */
    record Costs(
            double front,
            double syncCommit,
            double syncAnswer,
            double asyncPublish,
            double asyncAnswer,
            double asyncWorker,
            double loadGenerator,
            double refusal) {

        /** Bench at aa11ba3: SYNC 0.93, ASYNC 1.24 ms per order. */
        static final Costs BENCH = new Costs(0.45, 0.225, 0.255, 0.43, 0.18, 0.18, 0.30, 0.13);

        /**
         * A busier box: what both paths share (the front, the load generator) three and two times the bench's.
         * SYNC 1.83 + 0.6 ms per arrival, 700/s at 85 % of two cores; ASYNC 2.14 + 0.6, 620/s.
         */
        static final Costs NOISY = new Costs(1.35, 0.225, 0.255, 0.43, 0.18, 0.18, 0.60, 0.13);

        double sync() {
            return front + syncCommit + syncAnswer;
        }

        double async() {
            return front + asyncPublish + asyncAnswer + asyncWorker;
        }
    }

    /**
     * The box and its dependencies: {@code postgresMs} is added to every Postgres round trip. Every second
     * the box's CPU per step is scaled by a factor drawn within {@code 1 ± costNoise}, and the hypervisor
     * steals a share drawn within {@code stealMin..stealMax} of each core's time.
     */
    record Box(
            int cores,
            Costs costs,
            double postgresMs,
            double brokerMs,
            double costNoise,
            double stealMin,
            double stealMax) {
        static Box bench(double postgresMs) {
            return new Box(2, Costs.BENCH, postgresMs, BROKER_CONFIRM_MS, 0, 0, 0);
        }

        /**
         * The box of issue 39's sittings: the load generator and the services cost more per order than on the
         * bench (SYNC's capacity about 700/s at the CPU target, as AUTO estimated it there), CPU per order
         * varies by ± 20 % from second to second, and a neighbour steals 5–30 % of the cores.
         */
        static Box noisy(double postgresMs) {
            return new Box(2, Costs.NOISY, postgresMs, BROKER_CONFIRM_MS, 0.2, 0.05, 0.30);
        }
    }

    /** What the simulated instance gives the controller it builds (see {@link SimulatedPilot}). */
    record Instance(
            MeterRegistry meters,
            BulkheadRegistry bulkheads,
            CircuitBreakerRegistry breakers,
            DoubleSupplier cpuLoad,
            DoubleSupplier cpuSteal,
            int cores,
            Clock clock) {}

    /** One run's outcome. Latencies are of accepted purchases (201 or 202), arrival to answer. */
    record Result(
            long offered,
            long accepted,
            long refused,
            long viaSync,
            long viaAsync,
            double seconds,
            double p50Millis,
            double p99Millis,
            long switches) {

        double goodput() {
            return accepted / seconds;
        }
    }

    static final double PG_BASE_MS = 0.3;
    static final int PG_ROUND_TRIPS_PER_COMMIT = 5;
    static final double BROKER_CONFIRM_MS = 1.0;
    static final double REDIS_MARK_PUBLISHED_MS = 0.2;
    /** The scheduler's wait for a woken thread, per purchase in flight per core (see above). */
    static final double QUANTUM_MS = 0.35;
    /** AUTO is set a second after the start: ops set it on a running instance, whose paths were rehearsed. */
    static final long ENGAGE_NANOS = Duration.ofSeconds(1).toNanos();
    /** The worker gathers up to 100 ms per batch (decision 0003): its CPU follows a confirm by about half. */
    static final double WORKER_DELAY_MS = 50;
    /**
     * What a switch costs the path AUTO moves the crowd to: its round trips take up to this much longer,
     * falling to nothing over {@link #SWITCH_TRANSIENT_NANOS} (cold publisher channels and pool connections,
     * the other path's batches still in flight on the same cores). An estimate: in issue 39's sitting the
     * 15 s step in which AUTO switched had a p99 of 184 ms, against 32–34 ms for either mode alone.
     */
    static final double SWITCH_COLD_MS = 50;

    static final long SWITCH_TRANSIENT_NANOS = Duration.ofSeconds(1).toNanos();
    /** The box's CPU noise and steal change this often. */
    private static final long WEATHER_NANOS = Duration.ofSeconds(1).toNanos();

    static final long SAMPLE_NANOS = Duration.ofMillis(200).toNanos();
    private static final long BUCKET_NANOS = Duration.ofMillis(10).toNanos();
    private static final long DRAIN_NANOS = Duration.ofSeconds(5).toNanos();

    private record Event(long at, long seq, Runnable action) {}

    private final class Purchase {
        final long arrivedAt;
        PurchasePath path = PurchasePath.SYNC;
        long submittedAt;
        long lingered;

        Purchase(long arrivedAt) {
            this.arrivedAt = arrivedAt;
        }
    }

    private final Box box;
    private final ModeSetting setting;
    private final Shape shape;
    private final double peak;
    private final SplittableRandom random;
    private final SplittableRandom scheduler;

    private final MockClock clock = new MockClock();
    private final MeterRegistry meters = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
    private final Bulkhead bulkhead;
    private final SimulatedPilot pilot;
    private final MedianLimit door = new MedianLimit(
            Duration.ofMillis(20).toNanos(), Duration.ofMillis(100).toNanos(), 32, 1024);
    private final GroupCommit syncCommits;
    private final GroupCommit asyncCommits;

    private final PriorityQueue<Event> events =
            new PriorityQueue<>(Comparator.comparingLong(Event::at).thenComparingLong(Event::seq));
    private long seq;
    private long now;
    private final long[] coreFree;
    private final double[] busy;

    private int inFlight;
    private long offered;
    private long accepted;
    private long refused;
    private long viaSync;
    private long viaAsync;
    private long[] latencies = new long[1 << 16];
    private int answered;
    /** When each path was last rehearsed: never, so that both are rehearsed at the first sample. */
    private final long[] lastRehearsed = {Long.MIN_VALUE / 2, Long.MIN_VALUE / 2};

    private final boolean[] rehearsing = new boolean[2];
    /** When AUTO last moved the crowd to each path. */
    private final long[] switchedTo = {Long.MIN_VALUE / 2, Long.MIN_VALUE / 2};

    private PurchasePath recommended = PurchasePath.SYNC;
    /** Per {@link #WEATHER_NANOS}: the factor on CPU per step, and the share of the cores stolen. */
    private final double[] costFactor;

    private final double[] steal;

    Simulator(Box box, ModeSetting setting, Shape shape, double peak, long seed, SimulatedPilot.Factory pilots) {
        this.box = box;
        this.setting = setting;
        this.shape = shape;
        this.peak = peak;
        this.random = new SplittableRandom(seed);
        this.scheduler = new SplittableRandom(~seed);
        this.coreFree = new long[box.cores()];
        this.busy = new double[(int) ((shape.nanos() + 2 * DRAIN_NANOS) / BUCKET_NANOS) + 1];
        SplittableRandom weather = new SplittableRandom(seed * 7919);
        int spells = (int) ((shape.nanos() + 2 * DRAIN_NANOS) / WEATHER_NANOS) + 1;
        this.costFactor = new double[spells];
        this.steal = new double[spells];
        for (int i = 0; i < spells; i++) {
            costFactor[i] = 1 + box.costNoise() * (2 * weather.nextDouble() - 1);
            steal[i] = box.stealMin() + (box.stealMax() - box.stealMin()) * weather.nextDouble();
        }
        BulkheadRegistry bulkheads = BulkheadRegistry.of(BulkheadConfig.custom()
                .maxConcurrentCalls(256)
                .maxWaitDuration(Duration.ZERO)
                .build());
        this.bulkhead = bulkheads.bulkhead("sync-db");
        Clock wall = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.EPOCH.plusNanos(clock.monotonicTime());
            }
        };
        this.pilot = pilots.create(new Instance(
                meters,
                bulkheads,
                CircuitBreakerRegistry.ofDefaults(),
                this::cpuLoad,
                this::cpuSteal,
                box.cores(),
                wall));
        this.syncCommits = new GroupCommit(PurchasePath.SYNC, 4, 2000);
        this.asyncCommits = new GroupCommit(PurchasePath.ASYNC, 4, 4000);
    }

    Result run() {
        pilot.engage(false);
        at(ENGAGE_NANOS, () -> pilot.engage(setting == ModeSetting.AUTO));
        long first = nextArrival(0);
        if (first >= 0) {
            at(first, this::arrive);
        }
        at(SAMPLE_NANOS, this::sample);
        long end = shape.nanos() + DRAIN_NANOS;
        while (!events.isEmpty() && events.peek().at() <= end) {
            Event event = events.poll();
            clock.add(event.at() - now, TimeUnit.NANOSECONDS);
            now = event.at();
            event.action().run();
        }
        long[] sorted = Arrays.copyOf(latencies, answered);
        Arrays.sort(sorted);
        double seconds = (shape.nanos() - Shape.IDLE_NANOS) / 1e9;
        return new Result(
                offered,
                accepted,
                refused,
                viaSync,
                viaAsync,
                seconds,
                percentile(sorted, 0.50),
                percentile(sorted, 0.99),
                pilot.switches());
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] / 1e6;
    }

    private void at(long time, Runnable action) {
        events.add(new Event(time, seq++, action));
    }

    /** The next arrival after {@code from} (thinning at the shape's peak), or -1 past the shape's end. */
    private long nextArrival(long from) {
        double t = from / 1e9;
        double max = shape.maxRate(peak);
        while (true) {
            t = Math.max(t, Shape.IDLE_NANOS / 1e9) + -Math.log(1 - random.nextDouble()) / max;
            if (t * 1e9 >= shape.nanos()) {
                return -1;
            }
            if (random.nextDouble() * max < shape.rate(peak, t)) {
                return (long) (t * 1e9);
            }
        }
    }

    // The CPU: one FIFO queue, served by the cores.

    /** Queues {@code millis} of CPU now; answers when it is done and its thread has run again. */
    private long cpu(double millis) {
        long end = work(millis);
        double wait = -Math.log(1 - scheduler.nextDouble()) * QUANTUM_MS * inFlight / box.cores();
        return end + (long) (wait * 1e6);
    }

    /**
     * Queues {@code millis} of CPU now (scaled by this second's noise); answers when the cores have done it,
     * a core running only the share of the time the hypervisor leaves it.
     */
    private long work(double millis) {
        int core = 0;
        for (int i = 1; i < coreFree.length; i++) {
            if (coreFree[i] < coreFree[core]) {
                core = i;
            }
        }
        long start = Math.max(now, coreFree[core]);
        int spell = spell(start);
        double left = 1 - steal[spell];
        long end = start + (long) (millis * costFactor[spell] * 1e6 / left);
        coreFree[core] = end;
        for (long t = start; t < end; ) {
            int bucket = (int) (t / BUCKET_NANOS);
            long bucketEnd = (bucket + 1) * BUCKET_NANOS;
            long upTo = Math.min(end, bucketEnd);
            if (bucket < busy.length) {
                busy[bucket] += (upTo - t) * left;
            }
            t = upTo;
        }
        return end;
    }

    private int spell(long at) {
        return (int) Math.min(steal.length - 1, at / WEATHER_NANOS);
    }

    /**
     * The box's CPU load over the last sample interval, 0..1, as the JVM reports it from /proc/stat: busy
     * time over the time the cores ran, the stolen time in neither.
     */
    private double cpuLoad() {
        long from = Math.max(0, now - SAMPLE_NANOS);
        double sum = 0;
        double ran = 0;
        for (long b = from / BUCKET_NANOS; b < now / BUCKET_NANOS && b < busy.length; b++) {
            sum += busy[(int) b];
            ran += BUCKET_NANOS * (1 - steal[spell(b * BUCKET_NANOS)]) * box.cores();
        }
        return ran > 0 ? Math.min(1, sum / ran) : 0;
    }

    /** The share of the cores' time stolen over the last sample interval, as /proc/stat counts it. */
    private double cpuSteal() {
        long from = Math.max(0, now - SAMPLE_NANOS);
        double sum = 0;
        int buckets = 0;
        for (long b = from / BUCKET_NANOS; b < now / BUCKET_NANOS && b < busy.length; b++) {
            sum += steal[spell(b * BUCKET_NANOS)];
            buckets++;
        }
        return buckets > 0 ? sum / buckets : 0;
    }

    // A purchase: the door, the reservation, the path, the answer.

    private void arrive() {
        long next = nextArrival(now);
        if (next >= 0) {
            at(next, this::arrive);
        }
        offered++;
        work(box.costs().loadGenerator());
        if (inFlight >= door.getLimit()) {
            refused++;
            meters.counter("flashsale.door.refused", "reason", "limit").increment();
            work(box.costs().refusal());
            return;
        }
        inFlight++;
        Purchase purchase = new Purchase(now);
        pilot.arrived();
        at(cpu(box.costs().front()), () -> route(purchase));
    }

    /** As PurchasePaths.choose: a forced mode is obeyed; AUTO takes the other path when the chosen one cannot take it. */
    private void route(Purchase purchase) {
        PurchasePath mode = switch (setting) {
            case SYNC -> PurchasePath.SYNC;
            case ASYNC -> PurchasePath.ASYNC;
            case AUTO -> pilot.route();
        };
        if (!available(mode)) {
            PurchasePath other = mode == PurchasePath.SYNC ? PurchasePath.ASYNC : PurchasePath.SYNC;
            if (setting != ModeSetting.AUTO || !available(other)) {
                refused++;
                finish(purchase, false);
                return;
            }
            mode = other;
        }
        purchase.path = mode;
        purchase.submittedAt = now;
        if (mode == PurchasePath.SYNC) {
            bulkhead.tryAcquirePermission();
            syncCommits.submit(purchase);
        } else {
            asyncCommits.submit(purchase);
        }
    }

    private boolean available(PurchasePath mode) {
        return mode == PurchasePath.SYNC
                ? bulkhead.getMetrics().getAvailableConcurrentCalls() > 0 && syncCommits.admits()
                : asyncCommits.admits();
    }

    /** The purchase's round trip is done: the path's back half is measured, then the answer is written. */
    private void committed(Purchase purchase) {
        if (purchase.path == PurchasePath.SYNC) {
            bulkhead.onComplete();
        }
        pilot.took(purchase.path, now - purchase.submittedAt - purchase.lingered);
        double answer = purchase.path == PurchasePath.SYNC
                ? box.costs().syncAnswer()
                : box.costs().asyncAnswer();
        at(cpu(answer), () -> {
            pilot.answered(purchase.path, now - purchase.arrivedAt);
            accepted++;
            if (purchase.path == PurchasePath.SYNC) {
                viaSync++;
            } else {
                viaAsync++;
            }
            if (answered == latencies.length) {
                latencies = Arrays.copyOf(latencies, 2 * answered);
            }
            latencies[answered++] = now - purchase.arrivedAt;
            finish(purchase, true);
        });
    }

    private void finish(Purchase purchase, boolean ok) {
        inFlight--;
        door.onSample(purchase.arrivedAt, now - purchase.arrivedAt, inFlight, !ok);
    }

    // The sampler: the controller's tick, and each path's rehearsal every rehearsal interval.

    private void sample() {
        pilot.sample();
        PurchasePath chosen = pilot.route();
        if (setting == ModeSetting.AUTO && chosen != recommended) {
            switchedTo[chosen.ordinal()] = now;
            recommended = chosen;
        }
        for (PurchasePath path : PurchasePath.values()) {
            int i = path.ordinal();
            if (!rehearsing[i]
                    && now - lastRehearsed[i] >= pilot.rehearsalInterval().toNanos()) {
                rehearse(path);
            }
        }
        if (now + SAMPLE_NANOS <= shape.nanos() + DRAIN_NANOS) {
            at(now + SAMPLE_NANOS, this::sample);
        }
    }

    /** The path's back half without a shopper: one order's round trip, written nowhere. */
    private void rehearse(PurchasePath path) {
        int i = path.ordinal();
        rehearsing[i] = true;
        long started = now;
        long done = path == PurchasePath.SYNC
                ? cpu(box.costs().syncCommit()) + postgresCommitNanos()
                : cpu(box.costs().asyncPublish()) + brokerNanos();
        at(done, () -> {
            rehearsing[i] = false;
            lastRehearsed[i] = now;
            pilot.rehearsed(path, now - started);
        });
    }

    /** What a switch still costs a round trip on {@code path} (see {@link #SWITCH_COLD_MS}). */
    private long coldNanos(PurchasePath path) {
        long since = now - switchedTo[path.ordinal()];
        return since >= SWITCH_TRANSIENT_NANOS
                ? 0
                : (long) (SWITCH_COLD_MS * 1e6 * (1 - (double) since / SWITCH_TRANSIENT_NANOS));
    }

    private long postgresCommitNanos() {
        return (long) (PG_ROUND_TRIPS_PER_COMMIT * (PG_BASE_MS + box.postgresMs()) * 1e6);
    }

    private long brokerNanos() {
        return (long) ((box.brokerMs() + REDIS_MARK_PUBLISHED_MS) * 1e6);
    }

    /**
     * A path's group commit as {@code purchase.GroupCommit} runs it: {@code committers} rounds at once, one
     * committer gathering at a time, lingering 10 ms after its first item; a lone item after a quiet spell
     * commits at once; refuses (admits() false) on a standing late queue of a full batch for 100 ms.
     */
    private final class GroupCommit {
        static final long LINGER = Duration.ofMillis(10).toNanos();
        static final long MAX_QUEUE_DELAY = Duration.ofMillis(20).toNanos();
        static final long SHED_AFTER = Duration.ofMillis(100).toNanos();
        static final int MAX_BATCH = 100;

        private final PurchasePath path;
        private final int maxQueued;
        private final ArrayDeque<Purchase> queue = new ArrayDeque<>();
        private int freeRounds;
        private int idleCommitters;
        private boolean gathering;
        private boolean waitingForRound;
        private long lingerFrom;
        private boolean lingeredOnPurpose;
        private long lastArrival = -LINGER;
        private long lateSince;

        GroupCommit(PurchasePath path, int committers, int maxQueued) {
            this.path = path;
            this.maxQueued = maxQueued;
            this.freeRounds = committers;
            this.idleCommitters = committers;
        }

        boolean admits() {
            if (queue.size() >= maxQueued) {
                return false;
            }
            Purchase oldest = queue.peek();
            if (oldest == null || now - oldest.submittedAt < MAX_QUEUE_DELAY) {
                lateSince = 0;
                return true;
            }
            if (queue.size() < MAX_BATCH) {
                return true;
            }
            if (lateSince == 0) {
                lateSince = now;
                return true;
            }
            return now - lateSince < SHED_AFTER;
        }

        void submit(Purchase purchase) {
            boolean quiet = now - lastArrival >= LINGER;
            lastArrival = now;
            if (quiet && queue.isEmpty() && freeRounds > 0 && !waitingForRound) {
                freeRounds--;
                roundTrip(List.of(purchase), false);
                return;
            }
            queue.add(purchase);
            gather();
        }

        private void gather() {
            if (gathering || idleCommitters == 0 || queue.isEmpty()) {
                return;
            }
            gathering = true;
            idleCommitters--;
            lingerFrom = now;
            long wake = Math.max(now, queue.peek().submittedAt + LINGER);
            lingeredOnPurpose = wake > now;
            at(wake, this::lingered);
        }

        private void lingered() {
            if (freeRounds == 0) {
                waitingForRound = true;
                return;
            }
            take();
        }

        private void take() {
            long lingerTo = now;
            freeRounds--;
            List<Purchase> batch = new ArrayList<>(Math.min(queue.size(), MAX_BATCH));
            while (!queue.isEmpty() && batch.size() < MAX_BATCH) {
                Purchase purchase = queue.poll();
                if (lingeredOnPurpose) {
                    purchase.lingered = Math.max(0, lingerTo - Math.max(purchase.submittedAt, lingerFrom));
                }
                batch.add(purchase);
            }
            gathering = false;
            roundTrip(batch, true);
            gather();
        }

        private void roundTrip(List<Purchase> batch, boolean committer) {
            int n = batch.size();
            long done = path == PurchasePath.SYNC
                    ? cpu(n * box.costs().syncCommit()) + postgresCommitNanos()
                    : cpu(n * box.costs().asyncPublish()) + brokerNanos();
            done += coldNanos(path);
            at(done, () -> {
                batch.forEach(Simulator.this::committed);
                if (path == PurchasePath.ASYNC) {
                    at(
                            now + (long) (WORKER_DELAY_MS * 1e6),
                            () -> work(n * box.costs().asyncWorker()));
                }
                freeRounds++;
                if (committer) {
                    idleCommitters++;
                }
                if (waitingForRound) {
                    waitingForRound = false;
                    take();
                } else {
                    gather();
                }
            });
        }
    }
}
