package dev.flashsale.worker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A redis-server of a test's own, on its own port, without persistence: a test may make it refuse writes
 * (maxmemory, CLIENT PAUSE) without touching the shared Redis on 6379. Start it in a static initializer or
 * {@code @BeforeAll}, point the worker at it ({@code spring.data.redis.port}), close it after the class.
 */
public final class PrivateRedis implements AutoCloseable {

    private final int port;
    private final Process process;

    private PrivateRedis(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    /** Starts a fresh server on {@code port} (a leftover server of an earlier run on it is shut down first). */
    public static PrivateRedis start(int port) {
        try {
            if (listening(port)) {
                new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "shutdown", "nosave")
                        .start()
                        .waitFor();
            }
            Process started = new ProcessBuilder(
                            "redis-server",
                            "--port",
                            Integer.toString(port),
                            "--bind",
                            "127.0.0.1",
                            "--save",
                            "",
                            "--appendonly",
                            "no",
                            "--maxmemory-policy",
                            "noeviction")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
            while (!listening(port)) {
                if (!started.isAlive() || Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("redis-server on " + port + " did not start");
                }
                Thread.sleep(20);
            }
            return new PrivateRedis(port, started);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public int port() {
        return port;
    }

    /** Runs one redis-cli command against this server and answers its output. */
    public String cli(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        cli.waitFor();
        return out;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        process.waitFor();
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
