// A Neo4j Community DBMS for mindrian's tests, started by ci/neo4j-server (`java Launcher.java
// DIR`, source-file mode, the Maven copy of org.neo4j:neo4j on the classpath).
//
// Bolt listens on a free 127.0.0.1 port and advertises that address; authentication is on, and
// the user neo4j gets the password ci/neo4j-server wrote to DIR/password. Once a Bolt handshake
// answers, DIR/ready holds the port. SIGTERM shuts the DBMS down cleanly (shutdown hook).
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

public final class Launcher {
    private static final String HOST = "127.0.0.1";
    // The registry's graphs are small: a small page cache leaves the 2-core machine's memory
    // to the tests.
    private static final long PAGE_CACHE = ByteUnit.mebiBytes(64);
    private static final int BIND_TRIES = 5;

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: java Launcher.java DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]).toAbsolutePath();
        String password = Files.readString(dir.resolve("password"), StandardCharsets.UTF_8).strip();
        DatabaseManagementService dbms = null;
        int port = 0;
        RuntimeException last = null;
        // A port found free can be taken before Bolt binds it: try another one.
        for (int attempt = 0; attempt < BIND_TRIES && dbms == null; attempt++) {
            port = freePort();
            try {
                dbms = start(dir, port);
            } catch (RuntimeException e) {
                last = e;
            }
        }
        if (dbms == null) {
            throw last;
        }
        DatabaseManagementService started = dbms;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            started.shutdown();
            stopped.countDown();
        }));
        // The embedded API runs as an unrestricted user, so it can set the password that Bolt
        // clients then need (Community's user management: ALTER USER on the system database).
        started.database("system").executeTransactionally(
                "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                Map.of("password", password));
        waitForBolt(port);
        Path ready = dir.resolve("ready.tmp");
        Files.writeString(ready, Integer.toString(port), StandardCharsets.UTF_8);
        Files.move(ready, dir.resolve("ready"), StandardCopyOption.ATOMIC_MOVE);
        System.out.println("neo4j: Bolt on " + HOST + ":" + port);
        stopped.await();
    }

    private static DatabaseManagementService start(Path dir, int port) {
        SocketAddress bolt = new SocketAddress(HOST, port);
        return new DatabaseManagementServiceBuilder(dir.resolve("home"))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, bolt)
                .setConfig(BoltConnector.advertised_address, bolt)
                .setConfig(GraphDatabaseSettings.default_advertised_address, new SocketAddress(HOST))
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, PAGE_CACHE)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .build();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        }
    }

    /** Returns once a Bolt handshake on the port is answered with a protocol version. */
    private static void waitForBolt(int port) throws Exception {
        // The magic preamble, then four version proposals: 5.0-5.4, 4.4, and two empty ones.
        byte[] handshake = {
            0x60, 0x60, (byte) 0xB0, 0x17,
            0, 4, 4, 5,
            0, 0, 4, 4,
            0, 0, 0, 0,
            0, 0, 0, 0,
        };
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (true) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(HOST, port), 1000);
                socket.setSoTimeout(5000);
                OutputStream out = socket.getOutputStream();
                out.write(handshake);
                out.flush();
                InputStream in = socket.getInputStream();
                byte[] version = in.readNBytes(4);
                if (version.length == 4 && (version[2] != 0 || version[3] != 0)) {
                    return;
                }
            } catch (IOException e) {
                // Not listening yet: try again until the deadline.
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("no Bolt handshake on " + HOST + ":" + port);
            }
            Thread.sleep(200);
        }
    }
}
