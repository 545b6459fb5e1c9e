package dev.flashsale.common.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A redis-server of a test's own, on its own port and data directory, with the append-only file the
 * project runs with (appendfsync everysec): a test may kill it with SIGKILL, lose its disk, restart it from
 * an older copy of its data, or make it refuse writes (maxmemory, CLIENT PAUSE), without touching the shared
 * Redis on 6379. Start it in a static initializer, point the application at it ({@link #register}), close it
 * after the class. The helpers it keeps for a redis-server process are {@link PrivateSentinel}'s too.
 */
public final class PrivateRedis implements AutoCloseable {

    private final int port;
    private final Path dir;
    private Process process;

    private PrivateRedis(int port, Path dir) {
        this.port = port;
        this.dir = dir;
        this.process = launch();
    }

    /** Starts a fresh server on {@code port} (a leftover server of an earlier run on it is shut down). */
    public static PrivateRedis start(int port) {
        shutDownLeftovers(List.of(port));
        try {
            return new PrivateRedis(port, Files.createTempDirectory("flashsale-redis-" + port + "-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Points the application at this server. */
    public void register(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.port", this::port);
    }

    public int port() {
        return port;
    }

    /** SIGKILL: no shutdown, no final fsync. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Starts the server again on the same directory (it loads what its AOF kept). */
    public void restart() {
        process = launch();
    }

    /** The disk is gone too: the next start begins empty, as a Redis without persistence did. */
    public void wipe() throws IOException {
        deleteContents(dir);
    }

    /** Copies the data directory (call it while nothing writes, or on a killed server). */
    public Path copyData() throws IOException {
        Path copy = Files.createTempDirectory("flashsale-redis-copy-");
        copyTree(dir, copy);
        return copy;
    }

    /** Replaces the data directory with an earlier copy: the next start is behind, as a lagging replica. */
    public void restoreData(Path copy) throws IOException {
        deleteContents(dir);
        copyTree(copy, dir);
    }

    /** What redis-cli prints for a command to this server. */
    public String cli(String... args) {
        return cli(port, args);
    }

    /** What redis-cli prints for a command to the server on {@code port} (also {@link PrivateSentinel}'s). */
    static String cli(int port, String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        try {
            Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            cli.waitFor();
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws Exception {
        kill();
        deleteContents(dir);
        Files.deleteIfExists(dir);
    }

    private Process launch() {
        return launch(
                serverCommand(port, dir, List.of("--appendonly", "yes", "--appendfsync", "everysec")),
                port,
                new File(dir.toFile().getParentFile(), "flashsale-redis-" + port + ".log"));
    }

    /** A redis-server on loopback {@code port}, writing to {@code dir}, that never evicts a key. */
    static List<String> serverCommand(int port, Path dir, List<String> persistence) {
        List<String> command = new ArrayList<>(List.of(
                "redis-server",
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                dir.toString(),
                "--save",
                "",
                "--maxmemory-policy",
                "noeviction"));
        command.addAll(persistence);
        return command;
    }

    /** Starts {@code command} with its output in {@code log}, and waits until it listens on {@code port}. */
    static Process launch(List<String> command, int port, File log) {
        try {
            Process started = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log)
                    .start();
            await("redis on " + port, () -> started.isAlive() && listening(port));
            return started;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Shuts down what a run that died left listening on these ports. */
    static void shutDownLeftovers(List<Integer> ports) {
        for (int port : ports) {
            if (listening(port)) {
                cli(port, "shutdown", "nosave");
            }
        }
    }

    static void await(String what, BooleanSupplier done) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(20));
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException(what + ": not within 20 s");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    static boolean listening(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static void deleteContents(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                if (!path.equals(root)) {
                    Files.delete(path);
                }
            }
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : paths.toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(path, target);
                }
            }
        }
    }
}
