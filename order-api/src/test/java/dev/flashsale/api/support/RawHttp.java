package dev.flashsale.api.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Requests as an attacker writes them, byte for byte: what {@link java.net.http.HttpClient} refuses to send
 * (malformed escapes, raw brackets, control characters and non-ASCII bytes in headers, unknown methods).
 */
public final class RawHttp {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final int port;

    public RawHttp(int port) {
        this.port = port;
    }

    public record Response(int status, String head, String body) {

        public String contentType() {
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-type:")) {
                    return line.substring("content-type:".length()).trim();
                }
            }
            return "";
        }

        public JsonNode json() {
            return JSON.readTree(body);
        }

        public String code() {
            return json().path("code").asString("");
        }

        public String header(String name) {
            String prefix = name.toLowerCase(Locale.ROOT) + ":";
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
            }
            return "";
        }
    }

    /** Sends {@code requestLine}, the headers (each "Name: value"), and a body; reads until the server closes. */
    public Response send(String requestLine, String body, String... headers) {
        byte[] content = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder request = new StringBuilder(requestLine).append("\r\n");
        request.append("Host: 127.0.0.1:").append(port).append("\r\n");
        request.append("Connection: close\r\n");
        for (String header : headers) {
            request.append(header).append("\r\n");
        }
        if (content.length > 0) {
            request.append("Content-Length: ").append(content.length).append("\r\n");
        }
        request.append("\r\n");
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(request.toString().getBytes(StandardCharsets.UTF_8));
            socket.getOutputStream().write(content);
            socket.getOutputStream().flush();
            String response = new String(readAll(socket.getInputStream()), StandardCharsets.UTF_8);
            int split = response.indexOf("\r\n\r\n");
            String head = split < 0 ? response : response.substring(0, split);
            String rest = split < 0 ? "" : response.substring(split + 4);
            int status = Integer.parseInt(head.split(" ", 3)[1]);
            return new Response(status, head, dechunk(head, rest));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }

    private static String dechunk(String head, String body) {
        if (!head.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked")) {
            return body;
        }
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (at < body.length()) {
            int lineEnd = body.indexOf("\r\n", at);
            int size = Integer.parseInt(body.substring(at, lineEnd).trim(), 16);
            if (size == 0) {
                break;
            }
            out.append(body, lineEnd + 2, lineEnd + 2 + size);
            at = lineEnd + 2 + size + 2;
        }
        return out.toString();
    }
}
