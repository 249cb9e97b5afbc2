package io.pagewise.nbd;

import io.pagewise.internal.FileErrors;
import io.pagewise.nbd.tls.AnyServerTrust;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.SSLEngine;
import java.net.Socket;

/**
 * TLS contexts from a certificates directory laid out as nbdkit, qemu and libnbd expect it:
 * {@code ca-cert.pem} (the CA that signs the peer's certificate), {@code server-cert.pem} and
 * {@code server-key.pem} (the server's certificate chain and key), {@code client-cert.pem} and
 * {@code client-key.pem} (the client's, optional). Private keys are unencrypted PEM: PKCS#8
 * ({@code BEGIN PRIVATE KEY}), PKCS#1 RSA ({@code BEGIN RSA PRIVATE KEY}) or SEC1 EC ({@code BEGIN EC PRIVATE KEY}).
 * Only the JDK is used. Errors name the file and what is wrong with it.
 */
public final class TlsCertificates {
    /** The CA certificates that a peer's certificate must chain to. */
    public static final String CA_CERT = "ca-cert.pem";
    /** The server's certificate, followed by any intermediate certificates. */
    public static final String SERVER_CERT = "server-cert.pem";
    /** The server's private key. */
    public static final String SERVER_KEY = "server-key.pem";
    /** The client's certificate, presented when the directory has it. */
    public static final String CLIENT_CERT = "client-cert.pem";
    /** The client's private key. */
    public static final String CLIENT_KEY = "client-key.pem";

    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    private static final char[] NO_PASSWORD = new char[0];
    /** DER of AlgorithmIdentifier { rsaEncryption, NULL }. */
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
            (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
    /** DER of the OID id-ecPublicKey. */
    private static final byte[] EC_PUBLIC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    private TlsCertificates() {}

    /**
     * A server's TLS context: its certificate chain and key from {@code server-cert.pem} and {@code server-key.pem},
     * and, when client certificates are to be verified, the CAs of {@code ca-cert.pem} to verify them against.
     *
     * @param directory  the certificates directory
     * @param verifyPeer true to load {@code ca-cert.pem} (then required) for verifying client certificates
     * @return a context for {@link io.pagewise.nbd.server.NbdServer.Builder#tls}
     * @throws IOException when a file is missing, unreadable or not what it should be; the message names it
     */
    public static SSLContext serverContext(Path directory, boolean verifyPeer) throws IOException {
        KeyManager[] keys = keyManagers(directory.resolve(SERVER_CERT), directory.resolve(SERVER_KEY));
        TrustManager[] trust = null;
        if (verifyPeer) {
            X509ExtendedTrustManager cas = (X509ExtendedTrustManager) trustManagers(directory.resolve(CA_CERT))[0];
            trust = new TrustManager[] {new UnlistedIssuers(cas)};
        }
        return context(keys, trust);
    }

    /**
     * A client's TLS context: the CAs of {@code ca-cert.pem} to verify the server against, and the client's own
     * certificate and key when {@code client-cert.pem} and {@code client-key.pem} are present.
     *
     * @param directory the certificates directory
     * @return a context for {@link io.pagewise.nbd.client.NbdClient}
     * @throws IOException when {@code ca-cert.pem} is missing, only one of the client files is present, or a file is
     *                     unreadable or not what it should be; the message names it
     */
    public static SSLContext clientContext(Path directory) throws IOException {
        TrustManager[] trust = trustManagers(directory.resolve(CA_CERT));
        Path cert = directory.resolve(CLIENT_CERT);
        Path key = directory.resolve(CLIENT_KEY);
        boolean hasCert = Files.exists(cert);
        boolean hasKey = Files.exists(key);
        if (hasCert != hasKey) {
            throw new IOException((hasCert ? key : cert) + ": missing (" + (hasCert ? cert : key)
                    + " is there, and a client certificate needs both)");
        }
        return context(hasCert ? keyManagers(cert, key) : null, trust);
    }

    /**
     * A client's context that accepts any server certificate, as a URI's {@code tls-verify-peer=false} asks: the
     * connection is encrypted but the server is not authenticated. It presents the client's own certificate when
     * the directory has {@code client-cert.pem} and {@code client-key.pem}.
     *
     * @param directory the certificates directory, or null for no client certificate
     * @return a context for {@link io.pagewise.nbd.client.NbdClient}
     * @throws IOException when a client file is unreadable or not what it should be; the message names it
     */
    public static SSLContext clientContextTrustingAnyServer(Path directory) throws IOException {
        KeyManager[] keys = null;
        if (directory != null) {
            Path cert = directory.resolve(CLIENT_CERT);
            Path key = directory.resolve(CLIENT_KEY);
            if (Files.exists(cert) && Files.exists(key)) keys = keyManagers(cert, key);
        }
        return context(keys, new TrustManager[] {AnyServerTrust.INSTANCE});
    }

    /**
     * Verifies client certificates as the CAs of ca-cert.pem do, but names no CA in the TLS CertificateRequest:
     * GnuTLS clients (libnbd 1.14, qemu) with an RSA key send no certificate under TLS 1.3 when the JDK lists the
     * CAs there.
     */
    private static final class UnlistedIssuers extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager cas;

        UnlistedIssuers(X509ExtendedTrustManager cas) {
            this.cas = cas;
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            cas.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            cas.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            cas.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            cas.checkServerTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            cas.checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            cas.checkServerTrusted(chain, authType, engine);
        }
    }

    private static SSLContext context(KeyManager[] keys, TrustManager[] trust) throws IOException {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys, trust, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot make a TLS context: " + e.getMessage(), e);
        }
    }

    private static TrustManager[] trustManagers(Path caFile) throws IOException {
        List<X509Certificate> cas = certificates(caFile);
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            for (int i = 0; i < cas.size(); i++) store.setCertificateEntry("ca-" + i, cas.get(i));
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            return factory.getTrustManagers();
        } catch (GeneralSecurityException e) {
            throw new IOException(caFile + ": cannot use these certificates as trusted CAs: " + e.getMessage(), e);
        }
    }

    private static KeyManager[] keyManagers(Path certFile, Path keyFile) throws IOException {
        List<X509Certificate> chain = certificates(certFile);
        PrivateKey key = privateKey(keyFile);
        X509Certificate leaf = chain.get(0);
        if (!leaf.getPublicKey().getAlgorithm().equals(key.getAlgorithm())) {
            throw new IOException(keyFile + ": a " + key.getAlgorithm() + " key, but the certificate in " + certFile
                    + " is for a " + leaf.getPublicKey().getAlgorithm() + " key");
        }
        if (key instanceof RSAPrivateCrtKey && leaf.getPublicKey() instanceof RSAPublicKey
                && !((RSAPrivateCrtKey) key).getModulus().equals(((RSAPublicKey) leaf.getPublicKey()).getModulus())) {
            throw new IOException(keyFile + ": this key does not belong to the certificate in " + certFile);
        }
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("key", key, NO_PASSWORD, chain.toArray(new Certificate[0]));
            KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(store, NO_PASSWORD);
            return factory.getKeyManagers();
        } catch (GeneralSecurityException e) {
            throw new IOException(certFile + " and " + keyFile + ": cannot use them together: " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> certificates(Path file) throws IOException {
        String text = read(file);
        if (!text.contains("-----BEGIN CERTIFICATE-----")) {
            throw new IOException(file + ": no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)");
        }
        List<X509Certificate> result = new ArrayList<>();
        try (InputStream in = new ByteArrayInputStream(text.getBytes(StandardCharsets.US_ASCII))) {
            Collection<? extends Certificate> parsed = CertificateFactory.getInstance("X.509").generateCertificates(in);
            for (Certificate c : parsed) result.add((X509Certificate) c);
        } catch (CertificateException e) {
            throw new IOException(file + ": not a valid PEM certificate: " + e.getMessage(), e);
        }
        if (result.isEmpty()) throw new IOException(file + ": no certificate could be read from it");
        return result;
    }

    private static PrivateKey privateKey(Path file) throws IOException {
        String text = read(file);
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            String type = m.group(1);
            byte[] der;
            try {
                der = Base64.getMimeDecoder().decode(m.group(2));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + ": the " + type + " block is not valid base64", e);
            }
            switch (type) {
                case "PRIVATE KEY":
                    return pkcs8(file, der, "RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS");
                case "RSA PRIVATE KEY":
                    return pkcs8(file, sequence(concat(new byte[] {0x02, 0x01, 0x00}, RSA_ALGORITHM, octetString(der))),
                            "RSA");
                case "EC PRIVATE KEY":
                    return pkcs8(file, ecToPkcs8(file, der), "EC");
                case "ENCRYPTED PRIVATE KEY":
                    throw new IOException(file + ": the key is encrypted; give an unencrypted key "
                            + "(openssl pkey -in KEY -out " + file.getFileName() + ")");
                default:
                    // EC PARAMETERS and other blocks before the key
            }
        }
        if (text.contains("Proc-Type: 4,ENCRYPTED")) {
            throw new IOException(file + ": the key is encrypted; give an unencrypted key");
        }
        throw new IOException(file + ": no PEM private key in it (expected BEGIN PRIVATE KEY, BEGIN RSA PRIVATE KEY "
                + "or BEGIN EC PRIVATE KEY)");
    }

    private static PrivateKey pkcs8(Path file, byte[] der, String... algorithms) throws IOException {
        for (String algorithm : algorithms) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException e) {
                // try the next algorithm
            }
        }
        throw new IOException(file + ": not a private key this JDK can read (tried " + String.join(", ", algorithms) + ")");
    }

    /**
     * Wraps a SEC1 ECPrivateKey in a PKCS#8 PrivateKeyInfo, whose algorithm names the curve that the SEC1 key
     * carries in its optional [0] field.
     */
    private static byte[] ecToPkcs8(Path file, byte[] sec1) throws IOException {
        byte[] curve = null;
        try {
            int[] outer = header(sec1, 0); // SEQUENCE
            int at = outer[0];
            int end = at + outer[1];
            while (at < end) {
                int tag = sec1[at] & 0xff;
                int[] field = header(sec1, at);
                if (tag == 0xa0) {
                    int[] oid = header(sec1, field[0]);
                    curve = java.util.Arrays.copyOfRange(sec1, field[0], oid[0] + oid[1]);
                }
                at = field[0] + field[1];
            }
        } catch (ArrayIndexOutOfBoundsException e) {
            throw new IOException(file + ": the EC PRIVATE KEY block is not valid DER", e);
        }
        if (curve == null) throw new IOException(file + ": the EC key does not name its curve");
        byte[] algorithm = sequence(concat(EC_PUBLIC_KEY_OID, curve));
        return sequence(concat(new byte[] {0x02, 0x01, 0x00}, algorithm, octetString(sec1)));
    }

    /** {contents offset, contents length} of the DER element at offset. */
    private static int[] header(byte[] der, int offset) {
        int first = der[offset + 1] & 0xff;
        if (first < 0x80) return new int[] {offset + 2, first};
        int bytes = first & 0x7f;
        int length = 0;
        for (int i = 0; i < bytes; i++) length = (length << 8) | (der[offset + 2 + i] & 0xff);
        return new int[] {offset + 2 + bytes, length};
    }

    private static byte[] sequence(byte[] contents) {
        return element(0x30, contents);
    }

    private static byte[] octetString(byte[] contents) {
        return element(0x04, contents);
    }

    private static byte[] element(int tag, byte[] contents) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(contents.length + 6);
        out.write(tag);
        int n = contents.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) out.write(n >>> (8 * i));
        }
        out.write(contents, 0, n);
        return out.toByteArray();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) out.write(part, 0, part.length);
        return out.toByteArray();
    }

    private static String read(Path file) throws IOException {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": missing (a TLS certificates directory holds " + CA_CERT + ", " + SERVER_CERT
                    + ", " + SERVER_KEY + " and, for clients, optionally " + CLIENT_CERT + " and " + CLIENT_KEY + ")", e);
        } catch (java.nio.charset.MalformedInputException e) {
            throw new IOException(file + ": not a PEM file (it holds bytes that are not ASCII; DER is not accepted)", e);
        } catch (IOException e) {
            throw new IOException(file + ": cannot read it: " + FileErrors.reason(e), e);
        }
    }
}
