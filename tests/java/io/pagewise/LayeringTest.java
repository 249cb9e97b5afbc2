package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Nothing imports upward, read from the compiled classes (every type a class uses is named in its constant pool):
 * the block-device contract uses neither the devices, the filters, the server, the client nor the copier; the
 * copier uses only the contract, not the server; the devices and filters do not use the server or the copier; TLS
 * and the wire format use neither the server nor the client.
 */
@Timeout(60)
class LayeringTest {
    /** Package (as a class-file path) → the packages its classes must not name. */
    private static final Map<String, List<String>> FORBIDDEN = Map.of(
            "io/pagewise/device/", List.of("io/pagewise/devices/", "io/pagewise/filters/", "io/pagewise/nbd/",
                    "io/pagewise/copy/", "io/pagewise/cli/"),
            "io/pagewise/devices/", List.of("io/pagewise/filters/", "io/pagewise/nbd/server/",
                    "io/pagewise/nbd/NbdServer", "io/pagewise/copy/", "io/pagewise/cli/"),
            "io/pagewise/filters/", List.of("io/pagewise/nbd/", "io/pagewise/copy/", "io/pagewise/cli/"),
            "io/pagewise/copy/", List.of("io/pagewise/nbd/", "io/pagewise/devices/", "io/pagewise/filters/",
                    "io/pagewise/cli/"),
            "io/pagewise/nbd/tls/", List.of("io/pagewise/nbd/server/", "io/pagewise/nbd/client/",
                    "io/pagewise/nbd/NbdServer", "io/pagewise/nbd/NbdClient", "io/pagewise/device",
                    "io/pagewise/copy/", "io/pagewise/cli/"),
            "io/pagewise/nbd/wire/", List.of("io/pagewise/nbd/server/", "io/pagewise/nbd/client/",
                    "io/pagewise/nbd/NbdServer", "io/pagewise/nbd/NbdClient", "io/pagewise/device",
                    "io/pagewise/copy/", "io/pagewise/cli/"));

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
                        if (pool.contains(above)) upward.add(name + " names " + above);
                    }
                }
            }
        }
        assertTrue(checked >= 12, "checked " + checked + " classes");
        assertEquals(List.of(), upward, "classes that use a layer above their own");
    }
}
