package io.pagewise.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A test skips only through {@link ExternalTools#unavailable}, which fails it under CI=true: JUnit's own ways to
 * skip (assumptions, disabling annotations) would skip silently on CI too.
 */
class SkipsGoThroughOneHelperTest {
    private static final Pattern OTHER_SKIPS = Pattern.compile(
            "\\bAssumptions\\b|\\bassume(True|False|That)\\s*\\(|@(Disabled|Enabled)(If|On)\\w*|@Disabled\\b");

    @Test
    void noTestSkipsAnyOtherWay() throws IOException {
        Path root = Path.of(System.getProperty("user.dir"), "tests", "java");
        List<String> found = new ArrayList<>();
        int scanned = 0;
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                String name = file.getFileName().toString();
                if (name.equals("ExternalTools.java") || name.equals(getClass().getSimpleName() + ".java")) continue;
                scanned++;
                List<String> lines = Files.readAllLines(file);
                for (int i = 0; i < lines.size(); i++) {
                    if (OTHER_SKIPS.matcher(lines.get(i)).find()) found.add(root.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).strip());
                }
            }
        }
        assertTrue(scanned > 20, "scanned only " + scanned + " files under " + root);
        assertEquals(List.of(), found, "skip with ExternalTools.unavailable instead");
    }
}
