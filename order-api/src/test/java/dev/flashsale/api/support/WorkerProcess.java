package dev.flashsale.api.support;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * The real order-worker, run from its own jar as a separate process, as it is deployed: the end-to-end
 * tests drain their isolated queue with it, and can kill it mid-flight.
 */
public final class WorkerProcess implements AutoCloseable {

    private static final Path JAR = Path.of("..", "order-worker", "target", "order-worker.jar");
    private final Process process;
    private final int port;
    private final File log;

    private WorkerProcess(Process process, int port, File log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Starts a worker on the test topology and waits until it reports ready. */
    public static WorkerProcess start(String name) throws IOException, InterruptedException {
        return start(name, Map.of());
    }

    /** {@link #start(String)} with more environment variables (another Redis, for instance). */
    public static WorkerProcess start(String name, Map<String, String> extraEnv)
            throws IOException, InterruptedException {
        if (!JAR.toFile().isFile()) {
            throw new IllegalStateException(JAR + " is missing: build order-worker first (mvn verify builds it)");
        }
        int port = freePort();
        File log = Path.of("target", "worker-" + name + ".log").toFile();
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-jar", JAR.toString())
                .redirectErrorStream(true)
                .redirectOutput(log);
        Map<String, String> env = builder.environment();
        env.put("SERVER_PORT", Integer.toString(port));
        env.put("SPRING_PROFILES_ACTIVE", "local");
        // The redis-cluster subset (mvn -Predis-cluster) includes its profile in the tests' own: the worker's too.
        String included = System.getProperty("spring.profiles.include");
        if (included != null) {
            env.put("SPRING_PROFILES_INCLUDE", included);
        }
        env.put("APP_RECONCILER_GRACE", "60s");
        TestTopology.properties().forEach((key, value) -> env.put(envName(key), value));
        env.putAll(extraEnv);
        WorkerProcess worker = new WorkerProcess(builder.start(), port, log);
        worker.awaitReady(Duration.ofSeconds(120));
        return worker;
    }

    /** Kills the worker at once (SIGKILL): no shutdown hook, no pending acks. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
            kill();
        }
    }

    private void awaitReady(Duration timeout) throws InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("worker exited with " + process.exitValue() + "; see " + log);
            }
            try {
                HttpResponse<Void> response = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness"))
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            }
            Thread.sleep(250);
        }
        process.destroyForcibly();
        throw new IllegalStateException("worker not ready within " + timeout + "; see " + log);
    }

    private static String envName(String property) {
        return property.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
