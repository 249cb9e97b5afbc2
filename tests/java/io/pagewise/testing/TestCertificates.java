package io.pagewise.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Certificates made with openssl for the TLS tests, in nbdkit's directory layout. A CA signs a server certificate
 * for DNS:localhost and IP:127.0.0.1 (RSA key in PKCS#1) and two client certificates (an RSA key in PKCS#8, as
 * openssl makes it by default, and an EC key in SEC1); a second, unrelated CA signs a client certificate of its
 * own; one server certificate is expired. Each directory below is one situation.
 */
public final class TestCertificates {
    /** Everything of the good CA: ca-cert.pem, server-cert.pem/-key.pem (PKCS#1), client-cert.pem/-key.pem (RSA). */
    public final Path all;
    /** ca-cert.pem, and a client certificate with an EC key in SEC1 form ("BEGIN EC PRIVATE KEY"). */
    public final Path ecClient;
    /** The server files with the key in PKCS#8, and ca-cert.pem. */
    public final Path pkcs8Server;
    /** Only ca-cert.pem of the good CA: a client that verifies the server but has no certificate. */
    public final Path caOnly;
    /** ca-cert.pem of the other CA only: a client that does not trust the server. */
    public final Path otherCa;
    /** The good CA, and a client certificate signed by the other CA. */
    public final Path otherClient;
    /** The good CA, and an expired server certificate. */
    public final Path expiredServer;

    private final Path work;

    private TestCertificates(Path root) throws IOException {
        work = Files.createDirectories(root.resolve("work"));
        all = Files.createDirectories(root.resolve("all"));
        ecClient = Files.createDirectories(root.resolve("ec-client"));
        pkcs8Server = Files.createDirectories(root.resolve("pkcs8-server"));
        caOnly = Files.createDirectories(root.resolve("ca-only"));
        otherCa = Files.createDirectories(root.resolve("other-ca"));
        otherClient = Files.createDirectories(root.resolve("other-client"));
        expiredServer = Files.createDirectories(root.resolve("expired-server"));
    }

    private static TestCertificates shared;

    /**
     * One set for the whole test JVM, for tests that only read them: made at the first call in a temporary
     * directory, which is deleted when the JVM exits. Skips or fails as {@link #make} does.
     *
     * @return the directories
     * @throws IOException when openssl fails
     */
    public static synchronized TestCertificates shared() throws IOException {
        if (shared == null) {
            Path root = Files.createTempDirectory("pagewise-certs-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(root), "delete " + root));
            shared = make(root);
        }
        return shared;
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) Files.deleteIfExists(p);
        } catch (IOException e) {
            System.err.println("TestCertificates: could not delete " + root + ": " + e);
        }
    }

    /**
     * Makes all the directories under root; fails (under CI) or skips when openssl is missing.
     *
     * @param root an empty directory
     * @return the directories
     * @throws IOException when openssl fails
     */
    public static TestCertificates make(Path root) throws IOException {
        ExternalTools.require("openssl");
        TestCertificates c = new TestCertificates(root);
        c.ca("ca");
        c.ca("other-ca");
        c.rsaKey("server-key.pem");
        c.signed("server", "server-key.pem", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n", "ca", "30");
        c.signed("expired", "server-key.pem", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n", "ca", "-1");
        c.rsaKey("client-key.pem");
        c.signed("client", "client-key.pem", "client", "extendedKeyUsage=clientAuth\n", "ca", "30");
        c.openssl("ecparam", "-genkey", "-name", "prime256v1", "-out", "ec-client-key.pem");
        c.signed("ec-client", "ec-client-key.pem", "ec client", "extendedKeyUsage=clientAuth\n", "ca", "30");
        c.signed("other-client", "client-key.pem", "client", "extendedKeyUsage=clientAuth\n", "other-ca", "30");
        c.openssl("rsa", "-in", "server-key.pem", "-traditional", "-out", "server-key-pkcs1.pem");
        c.openssl("pkey", "-in", "server-key.pem", "-out", "server-key-pkcs8.pem");

        c.copy("ca-cert.pem", c.all, "ca-cert.pem");
        c.copy("server-cert.pem", c.all, "server-cert.pem");
        c.copy("server-key-pkcs1.pem", c.all, "server-key.pem");
        c.copy("client-cert.pem", c.all, "client-cert.pem");
        c.copy("client-key.pem", c.all, "client-key.pem");
        c.copy("ca-cert.pem", c.ecClient, "ca-cert.pem");
        c.copy("ec-client-cert.pem", c.ecClient, "client-cert.pem");
        c.copy("ec-client-key.pem", c.ecClient, "client-key.pem");
        c.copy("ca-cert.pem", c.pkcs8Server, "ca-cert.pem");
        c.copy("server-cert.pem", c.pkcs8Server, "server-cert.pem");
        c.copy("server-key-pkcs8.pem", c.pkcs8Server, "server-key.pem");
        c.copy("ca-cert.pem", c.caOnly, "ca-cert.pem");
        c.copy("other-ca-cert.pem", c.otherCa, "ca-cert.pem");
        c.copy("ca-cert.pem", c.otherClient, "ca-cert.pem");
        c.copy("other-client-cert.pem", c.otherClient, "client-cert.pem");
        c.copy("client-key.pem", c.otherClient, "client-key.pem");
        c.copy("ca-cert.pem", c.expiredServer, "ca-cert.pem");
        c.copy("expired-cert.pem", c.expiredServer, "server-cert.pem");
        c.copy("server-key-pkcs1.pem", c.expiredServer, "server-key.pem");
        return c;
    }

    private void ca(String name) throws IOException {
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + "-key.pem", "-out", name + "-cert.pem",
                "-days", "30", "-subj", "/CN=pagewise test " + name, "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    }

    private void rsaKey(String file) throws IOException {
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", file);
    }

    /** A certificate NAME-cert.pem for key, signed by CA, valid for days (negative: already expired). */
    private void signed(String name, String key, String commonName, String extensions, String ca, String days)
            throws IOException {
        Files.writeString(work.resolve(name + ".ext"), extensions);
        openssl("req", "-new", "-key", key, "-out", name + ".csr", "-subj", "/CN=" + commonName);
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + "-cert.pem", "-CAkey", ca + "-key.pem",
                "-CAcreateserial", "-days", days, "-extfile", name + ".ext", "-out", name + "-cert.pem");
    }

    private void copy(String from, Path dir, String to) throws IOException {
        Files.copy(work.resolve(from), dir.resolve(to), StandardCopyOption.REPLACE_EXISTING);
    }

    private void openssl(String... args) throws IOException {
        String[] command = new String[args.length + 1];
        command[0] = "openssl";
        System.arraycopy(args, 0, command, 1, args.length);
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes());
        try {
            if (process.waitFor() != 0) throw new IOException(String.join(" ", command) + " failed:\n" + output);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
