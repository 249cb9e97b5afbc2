package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Nothing imports upward, read from the compiled classes (every type a class uses is named in its constant pool):
 * the block-device contract uses neither the backends, the filters, the server, the client nor the copier; the
 * copier uses only the contract, not the server; the backends and filters do not use the server or the copier; the
 * backup's bitmap file uses no filter; the server and the client do not use each other, and what they share uses
 * neither; TLS and the wire format use neither the server nor the client. Inside the server, the service (listener,
 * connections) is above the protocol (handshake, transmission), which is above who may connect, which export a name
 * finds, and the metrics; none of those uses the service, and access, exports and metrics do not use the protocol.
 * The code under the API ({@code internal}) names no class of the API package, which is built on it, and what both
 * speak of, failed system calls and alignment ({@code system}), uses neither.
 */
@Timeout(60)
class LayeringTest {
    private static final String CONTRACT = "io/pagewise/device/";
    private static final String BACKENDS = "io/pagewise/backends/";
    private static final String FILTERS = "io/pagewise/filters/";
    private static final String NBD = "io/pagewise/nbd/";
    private static final String SERVER = "io/pagewise/nbd/server/";
    private static final String SERVICE = "io/pagewise/nbd/server/service/";
    private static final String PROTOCOL = "io/pagewise/nbd/server/protocol/";
    private static final String CLIENT = "io/pagewise/nbd/client/";
    private static final String COPY = "io/pagewise/copy/";
    private static final String CLI = "io/pagewise/cli/";
    private static final String BACKUP = "io/pagewise/backup/";
    private static final String INTERNAL = "io/pagewise/internal/";
    private static final String SYSTEM = "io/pagewise/system/";
    /** A class of the API package itself (its subpackages' names are lower case). */
    private static final String API = "io/pagewise/[A-Z]\\w*";

    /** Package (as a class-file path) → the packages its classes must not name. */
    private static final Map<String, List<String>> FORBIDDEN = Map.ofEntries(
            Map.entry(SYSTEM, List.of(API, INTERNAL, CONTRACT, NBD, CLI)),
            Map.entry(INTERNAL, List.of(API, CONTRACT, BACKENDS, FILTERS, NBD, COPY, BACKUP, CLI)),
            Map.entry(CONTRACT, List.of(BACKENDS, FILTERS, NBD, COPY, BACKUP, CLI)),
            Map.entry(BACKENDS, List.of(FILTERS, SERVER, COPY, CLI)),
            Map.entry(FILTERS, List.of(NBD, COPY, CLI)),
            Map.entry(COPY, List.of(NBD, BACKENDS, FILTERS, BACKUP, CLI)),
            Map.entry(BACKUP, List.of(NBD, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(NBD, List.of(SERVER, CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(SERVER, List.of(CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(SERVICE, List.of(CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(PROTOCOL, List.of(SERVICE, CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(SERVER + "access/", List.of(SERVICE, PROTOCOL, CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(SERVER + "exports/", List.of(SERVICE, PROTOCOL, CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(SERVER + "metrics/", List.of(SERVICE, PROTOCOL, CLIENT, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry(CLIENT, List.of(SERVER, BACKENDS, FILTERS, COPY, CLI)),
            Map.entry("io/pagewise/nbd/tls/", List.of(SERVER, CLIENT, CONTRACT, COPY, CLI)),
            Map.entry("io/pagewise/nbd/wire/", List.of(SERVER, CLIENT, CONTRACT, COPY, CLI)));

    @Test
    void noPackageNamesALayerAboveIt() throws Exception {
        Path root = Path.of(Native.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> upward = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> files = Files.walk(root.resolve("io/pagewise"))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(file).toString();
                for (Map.Entry<String, List<String>> layer : FORBIDDEN.entrySet()) {
                    if (!name.startsWith(layer.getKey()) || name.substring(layer.getKey().length()).contains("/")) continue;
                    checked++;
                    // Class names in the constant pool are modified UTF-8, which is ASCII for these names.
                    String pool = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
                    for (String above : layer.getValue()) {
                        java.util.regex.Matcher named = Pattern.compile(above).matcher(pool);
                        if (named.find()) upward.add(name + " names " + named.group());
                    }
                }
            }
        }
        assertTrue(checked >= 40, "checked " + checked + " classes");
        assertEquals(List.of(), upward, "classes that use a layer above their own");
    }
}
