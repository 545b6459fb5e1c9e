package dev.flashsale.common.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Production's Redis topology in small, of a test's own: a master, one replica and one Sentinel (quorum 1,
 * down-after 2 s) on loopback ports of their own, without persistence. A test may freeze the master with
 * SIGSTOP: its kernel still acknowledges every byte, so for its clients it dies without a word, while the
 * Sentinel sees it stop answering and promotes the replica.
 */
public final class PrivateSentinel implements AutoCloseable {

    public static final String MASTER_NAME = "flashsale-test";

    private final int masterPort;
    private final int replicaPort;
    private final int sentinelPort;
    private final Path dir;
    private final List<Process> processes = new ArrayList<>();
    private final Process master;

    private PrivateSentinel(int masterPort, int replicaPort, int sentinelPort) throws IOException {
        this.masterPort = masterPort;
        this.replicaPort = replicaPort;
        this.sentinelPort = sentinelPort;
        this.dir = Files.createTempDirectory("flashsale-sentinel-");
        this.master = node(masterPort, null);
        node(replicaPort, masterPort);
        Path config = dir.resolve("sentinel.conf");
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "port " + sentinelPort,
                        "bind 127.0.0.1",
                        "dir " + dir,
                        "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + masterPort + " 1",
                        "sentinel down-after-milliseconds " + MASTER_NAME + " 2000",
                        "sentinel failover-timeout " + MASTER_NAME + " 10000",
                        ""));
        launch(List.of("redis-server", config.toString(), "--sentinel"), sentinelPort);
        PrivateRedis.await(
                "the replica in sync and known to the Sentinel",
                () -> PrivateRedis.cli(replicaPort, "INFO", "replication").contains("master_link_status:up")
                        && PrivateRedis.cli(sentinelPort, "SENTINEL", "REPLICAS", MASTER_NAME)
                                .contains(Integer.toString(replicaPort)));
    }

    /** Starts the three on these ports (leftovers of an earlier run on them are shut down). */
    public static PrivateSentinel start(int masterPort, int replicaPort, int sentinelPort) {
        PrivateRedis.shutDownLeftovers(List.of(sentinelPort, replicaPort, masterPort));
        try {
            return new PrivateSentinel(masterPort, replicaPort, sentinelPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Points the application at the Sentinel, as the redis-sentinel profile does in production. */
    public void register(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.sentinel.master", () -> MASTER_NAME);
        registry.add("spring.data.redis.sentinel.nodes", () -> "127.0.0.1:" + sentinelPort);
    }

    public int masterPort() {
        return masterPort;
    }

    public int replicaPort() {
        return replicaPort;
    }

    /** Waits until the replica has every write the master took. */
    public void replicated() {
        PrivateRedis.cli(masterPort, "WAIT", "1", "5000");
    }

    /** SIGSTOP: the master answers nothing more, and closes nothing. */
    public void freezeMaster() throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-STOP", Long.toString(master.pid())).start().waitFor();
    }

    /** The port of the master the Sentinel names now. */
    public String namedMaster() {
        List<String> lines = PrivateRedis.cli(sentinelPort, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
                .lines()
                .toList();
        return lines.size() < 2 ? "" : lines.get(1);
    }

    @Override
    public void close() throws Exception {
        for (Process process : processes) {
            process.destroyForcibly();
            process.waitFor();
        }
        PrivateRedis.deleteContents(dir);
        Files.deleteIfExists(dir);
    }

    private Process node(int port, @Nullable Integer replicaOf) throws IOException {
        Path nodeDir = Files.createDirectories(dir.resolve("node-" + port));
        List<String> options = replicaOf == null
                ? List.of("--appendonly", "no")
                : List.of("--appendonly", "no", "--replicaof", "127.0.0.1", Integer.toString(replicaOf));
        return launch(PrivateRedis.serverCommand(port, nodeDir, options), port);
    }

    private Process launch(List<String> command, int port) {
        Process started = PrivateRedis.launch(command, port, new File(dir.toFile(), "redis-" + port + ".log"));
        processes.add(started);
        return started;
    }
}
