package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve --stats} and {@code --filter=stats} report a copy in the same fields, FLUSH and the flush at shutdown too. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServeStatsTest {
    private static final Pattern OPERATION = Pattern.compile("^([a-z][a-z ]*): (calls=.*)$", Pattern.MULTILINE);
    private static final Pattern FIELD = Pattern.compile("([a-z]+)=");
    private static final Pattern BREAKDOWN = Pattern.compile(
            "^  \\d+ [KMGT]?i?B\\.\\.\\d+ [KMGT]?i?B: \\d+ calls \\(\\d+\\.\\d%\\), [\\d.]+ [KMGT]?i?B; aligned to .*$", Pattern.MULTILINE);

    @TempDir
    Path dir;

    @Test
    void statsAndTheStatsFilterShowTheSameFieldsForACopy() throws Exception {
        ExternalTools.require("nbdcopy");
        Path source = dir.resolve("source.bin");
        byte[] data = new byte[3 << 20];
        new Random(3).nextBytes(data);
        Files.write(source, data);
        Path serverStats = dir.resolve("server.txt");
        Path filterStats = dir.resolve("filter.txt");
        CommandRun outcome = CommandRun.command("serve", "--create=8M", "--stats=" + serverStats,
                "--filter=stats:file=" + filterStats, "--run", "nbdcopy --flush " + source + " \"$uri\"",
                dir.resolve("disk.img").toString());
        outcome.assertOk();
        String server = Files.readString(serverStats);
        String filter = Files.readString(filterStats);
        Map<String, List<String>> fromServer = fields(server);
        Map<String, List<String>> fromFilter = fields(filter);
        assertTrue(fromServer.containsKey("write") && fromServer.containsKey("flush")
                && fromServer.containsKey("flush at shutdown"), server);
        assertEquals(fromServer, fromFilter, "the same operations and fields\nserver:\n" + server + "\nfilter:\n" + filter);
        assertEquals(List.of("calls", "bytes", "errors", "mean", "max", "rate"), fromServer.get("write"));
        assertTrue(BREAKDOWN.matcher(server).find() && BREAKDOWN.matcher(filter).find(),
                "both break the sizes down\nserver:\n" + server + "\nfilter:\n" + filter);
        assertTrue(server.contains("\nwrite: calls=") && filter.contains("\nwrite: calls="), server + filter);
    }

    /** Each operation of a report with the names of its fields. */
    private static Map<String, List<String>> fields(String report) {
        Map<String, List<String>> operations = new LinkedHashMap<>();
        Matcher m = OPERATION.matcher(report);
        while (m.find()) {
            Matcher f = FIELD.matcher(m.group(2));
            List<String> names = new java.util.ArrayList<>();
            while (f.find()) names.add(f.group(1));
            operations.put(m.group(1), names);
        }
        return operations;
    }
}
