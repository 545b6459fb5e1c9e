package dev.flashsale.api.support;

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
import java.util.stream.Stream;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A redis-server of a test's own, on its own port and data directory, with the append-only file the
 * project runs with (appendfsync everysec): a test may kill it with SIGKILL, lose its disk, or restart it
 * from an older copy of its data, without touching the shared Redis on 6379.
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
        try {
            if (listening(port)) {
                new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "shutdown", "nosave")
                        .start()
                        .waitFor();
            }
            return new PrivateRedis(port, Files.createTempDirectory("flashsale-redis-" + port + "-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Points the API at this Redis, with the rebuild watch looking every 300 ms and a rebuild's freeze at 1 s;
     * other tests' sales selling now in the shared Postgres stay out of it (recently-sold 0 s), so a missing
     * sale comes back on its next use.
     */
    public void register(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.port", this::port);
        registry.add("app.rebuild.freeze", () -> "1s");
        registry.add("test.rebuild.watch-interval", () -> "300ms");
        registry.add("app.rebuild.recently-sold", () -> "0s");
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

    public String cli(String... args) throws IOException, InterruptedException {
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
        try {
            Process started = new ProcessBuilder(
                            "redis-server",
                            "--port",
                            Integer.toString(port),
                            "--bind",
                            "127.0.0.1",
                            "--dir",
                            dir.toString(),
                            "--save",
                            "",
                            "--appendonly",
                            "yes",
                            "--appendfsync",
                            "everysec",
                            "--maxmemory-policy",
                            "noeviction")
                    .redirectErrorStream(true)
                    .redirectOutput(new File(dir.toFile().getParentFile(), "flashsale-redis-" + port + ".log"))
                    .start();
            Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
            while (!listening(port)) {
                if (!started.isAlive() || Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("redis-server on " + port + " did not start");
                }
                Thread.sleep(20);
            }
            return started;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
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
