package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ModulePathProbe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library as the named module {@code io.pagewise} (the rest of the suite uses it from the class path): it exports
 * only the API packages, loads its native library from inside the module, and runs without a JVM warning given the
 * one flag {@code --enable-native-access=io.pagewise}.
 */
@Timeout(120)
class ModulePathTest {
    @TempDir
    Path tmp;

    private static Path location(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void theModuleExportsOnlyTheApiAndLoadsItsNativeLibrary() throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=io.pagewise",
                "--module-path", location(Native.class).toString(), "--add-modules", "io.pagewise",
                "-cp", location(ModulePathProbe.class).toString(), ModulePathProbe.class.getName(), tmp.toString());
        Process process = new ProcessBuilder(command).start();
        process.getOutputStream().close();
        String stdout;
        String stderr;
        try {
            stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        } finally {
            process.destroyForcibly();
        }
        String output = "stdout:\n" + stdout + "stderr:\n" + stderr;
        assertEquals(0, process.exitValue(), "child JVM failed:\n" + output);
        Map<String, String> seen = new HashMap<>();
        for (String line : stdout.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) seen.put(line.substring(0, eq), line.substring(eq + 1));
        }
        assertEquals("io.pagewise", seen.get("module"), "the library is a named module\n" + output);
        assertEquals("io.pagewise,io.pagewise.backends,io.pagewise.backup,io.pagewise.copy,io.pagewise.device,io.pagewise.filters,io.pagewise.nbd,io.pagewise.nbd.client,io.pagewise.nbd.server,io.pagewise.system",
                seen.get("exports"), output);
        assertEquals("true", seen.get("available"), "the native library loads inside the module\n" + output);
        assertEquals("true,EVICT,79", seen.get("io"), "native I/O works\n" + output);
        assertEquals("", stderr, "no JVM warning with --enable-native-access=io.pagewise");
    }
}
