package io.pagewise.cli;

import io.pagewise.nbd.TlsCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The training run of {@code bin/pagewise}'s ahead-of-time cache (JDK 25+, {@code -XX:AOTCacheOutput}): a
 * {@code pagewise serve --tls=require} on 127.0.0.1, read over {@code nbds://} by {@code pagewise copy} in this same
 * JVM, then a normal exit, at which the JVM writes the cache. The certificate (made by the JDK's keytool) and the
 * file served live in a temporary directory that is removed before the exit.
 */
public final class AotTraining {
    /** The file served; it is read {@link #READS} times, so the server sends 256 MiB over TLS. */
    static final int FILE_SIZE = 64 << 20;
    static final int READS = 4;
    private static final long START_TIMEOUT_SECONDS = 60;

    private AotTraining() {}

    /**
     * Trains and exits: 0 when the reads succeeded, 1 (with one line on stderr saying why) when not.
     *
     * @param args none
     */
    public static void main(String[] args) {
        int status;
        try {
            train();
            status = 0;
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            System.err.println("pagewise: training the AOT cache failed: " + Main.message(e));
            status = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = 1;
        }
        // The server's thread is still serving: exit stops it through serve's shutdown hook, as SIGTERM would.
        System.exit(status);
    }

    private static void train() throws IOException, GeneralSecurityException, InterruptedException {
        Path dir = Files.createTempDirectory("pagewise-aot-");
        try {
            Path certificates = Files.createDirectory(dir.resolve("certs"));
            certificates(certificates);
            Path file = dir.resolve("training.img");
            byte[] data = new byte[FILE_SIZE];
            new SplittableRandom(1).nextBytes(data);
            Files.write(file, data);
            Path pidFile = dir.resolve("serve.pid");
            int port = freePort();
            PrintStream quiet = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
            int[] serveStatus = {-1};
            Thread serve = new Thread(() -> serveStatus[0] = ServeCommand.run(List.of("--tls=require",
                    "--tls-certificates=" + certificates, "--bind=127.0.0.1", "--port=" + port,
                    "--pidfile=" + pidFile, file.toString()), quiet, quiet), "pagewise-aot-serve");
            serve.setDaemon(true);
            serve.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
            while (!Files.exists(pidFile)) {
                if (!serve.isAlive()) throw new IOException("serve exited with status " + serveStatus[0]);
                if (System.nanoTime() > deadline) throw new IOException("serve did not listen within "
                        + START_TIMEOUT_SECONDS + " s");
                Thread.sleep(10);
            }
            String uri = "nbds://127.0.0.1:" + port + "/?tls-certificates=" + certificates;
            for (int read = 0; read < READS; read++) {
                int status = Main.run(new String[] {"copy", uri, "null:"}, InputStream.nullInputStream(),
                        OutputStream.nullOutputStream(), quiet, quiet);
                if (status != 0) throw new IOException("pagewise copy " + uri + " null: exited with status " + status);
            }
        } finally {
            deleteTree(dir);
        }
    }

    /** A self-signed server certificate for 127.0.0.1, which is its own CA, in the layout serve and copy read. */
    private static void certificates(Path dir) throws IOException, GeneralSecurityException, InterruptedException {
        Path store = dir.resolve("server.p12");
        char[] password = "training".toCharArray();
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process process = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "server", "-keyalg", "RSA",
                "-keysize", "2048", "-validity", "2", "-dname", "CN=localhost", "-ext",
                "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", new String(password), "-keypass", new String(password))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!process.waitFor(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(keytool + " did not finish within " + START_TIMEOUT_SECONDS + " s");
        }
        if (process.exitValue() != 0) throw new IOException(keytool + " -genkeypair exited with status "
                + process.exitValue());
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, password);
        }
        Certificate certificate = keyStore.getCertificate("server");
        String certificatePem = pem("CERTIFICATE", certificate.getEncoded());
        Files.writeString(dir.resolve(TlsCertificates.SERVER_CERT), certificatePem);
        Files.writeString(dir.resolve(TlsCertificates.CA_CERT), certificatePem);
        Files.writeString(dir.resolve(TlsCertificates.SERVER_KEY), pem("PRIVATE KEY",
                keyStore.getKey("server", password).getEncoded()));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(path);
        }
    }
}
