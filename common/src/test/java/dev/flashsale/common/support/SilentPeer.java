package dev.flashsale.common.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder in front of a server, as toxiproxy's {@code timeout} toxic with no timeout is: after
 * {@link #silence()}, every connection already open stays open but goes silent. Its bytes are read (so the
 * kernel acknowledges them and no TCP timer ever fires) and dropped, and nothing comes back: no reset, no
 * close, as a master that died without a word behind a proxy or an address that moved. Connections opened
 * afterwards are forwarded as before: the address now leads to a healthy server, as it does once Sentinel
 * promoted a replica. Runs in the test's JVM, so a test needs nothing installed. Redis (order-api) and the
 * broker (common) go silent through it.
 */
public final class SilentPeer implements AutoCloseable {

    private final ServerSocket listener;
    private final int upstreamPort;
    private final List<Link> links = new CopyOnWriteArrayList<>();

    private static final class Link {
        final Socket client;
        final Socket server;
        volatile boolean silent;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }
    }

    private SilentPeer(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("silent-peer-accept").start(this::accept);
    }

    /** Forwards a fresh port on loopback to {@code upstreamPort} on loopback. */
    public static SilentPeer before(int upstreamPort) {
        try {
            return new SilentPeer(upstreamPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Every connection open now goes silent for good; new ones are forwarded. */
    public void silence() {
        links.forEach(link -> link.silent = true);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
                Link link = new Link(client, server);
                links.add(link);
                Thread.ofVirtual().start(() -> pump(link, link.client, link.server));
                Thread.ofVirtual().start(() -> pump(link, link.server, link.client));
            } catch (IOException e) {
                // closed, or the upstream refused this one connection: the client sees it closed
            }
        }
    }

    private static void pump(Link link, Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                if (!link.silent) {
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // one side closed: the link ends below
        }
        // The server never closes first here: this is the client closing, which a silent peer never sees.
        closeQuietly(link.client);
        closeQuietly(link.server);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Link link : links) {
            closeQuietly(link.client);
            closeQuietly(link.server);
        }
    }
}
