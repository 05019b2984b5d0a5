import com.sun.net.httpserver.HttpServer;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A JVM bot for the cage's tests: locks a file of its own (FileLock), then answers every
 * request; an act with the first legal action (found in the body's "legal" array). */
public class JvmBot {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[args.length - 1]);
        Path home = Path.of(System.getenv("HOME"), "jvm.lock");
        try (RandomAccessFile file = new RandomAccessFile(home.toFile(), "rw");
             FileLock lock = file.getChannel().lock()) {
            System.out.println("JVM FileLock " + (lock.isValid() ? "works" : "FAILED"));
        }
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            byte[] reply = ("{\"action\": " + firstLegal(body) + "}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, reply.length);
            exchange.getResponseBody().write(reply);
            exchange.close();
        });
        server.start();
        System.out.println("JVM bot listening on " + port);
    }

    /** The first element of the "legal" array as JSON text ("null" when there is none). */
    static String firstLegal(String body) {
        int at = body.indexOf("\"legal\"");
        if (at < 0) return "null";
        int start = body.indexOf('[', at) + 1, depth = 0;
        boolean quoted = false;
        for (int i = start; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c == '"' && body.charAt(i - 1) != '\\') quoted = !quoted;
            if (quoted) continue;
            if (c == '[' || c == '{') depth++;
            if (c == ']' || c == '}') {
                if (depth == 0) return i > start ? body.substring(start, i).trim() : "null";
                depth--;
            }
            if (c == ',' && depth == 0) return body.substring(start, i).trim();
        }
        return "null";
    }
}
