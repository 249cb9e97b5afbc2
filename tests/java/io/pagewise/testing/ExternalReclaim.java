package io.pagewise.testing;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reclaim the test does not cause: a DAMON scheme that pages out cold file pages. This machine's kernel runs one
 * (a kdamond over part of physical memory, action {@code pageout}, unmapped file pages idle for a minute), and it
 * took 8 and 16 pages of 16384 from files a test had just cached. A test that asserts pages stay cached asks here
 * whether such reclaim ran while it looked, and may try again only then.
 */
public final class ExternalReclaim {
    private static final Path KDAMONDS = Path.of("/sys/kernel/mm/damon/admin/kdamonds");

    private ExternalReclaim() {}

    /**
     * Bytes that running DAMON schemes with a reclaiming action have paged out since boot, or -1 where that cannot be
     * read (no DAMON, or not root: the statistics are refreshed by writing to sysfs). Only ever grows.
     */
    public static long pagedOutBytes() {
        if (!Files.isDirectory(KDAMONDS)) return -1;
        long total = 0;
        boolean any = false;
        try {
            for (Path kdamond : numbered(KDAMONDS)) {
                if (!"on".equals(Files.readString(kdamond.resolve("state")).trim())) continue;
                Files.writeString(kdamond.resolve("state"), "update_schemes_stats");
                for (Path context : numbered(kdamond.resolve("contexts"))) {
                    for (Path scheme : numbered(context.resolve("schemes"))) {
                        if (!"pageout".equals(Files.readString(scheme.resolve("action")).trim())) continue;
                        total += Long.parseLong(Files.readString(scheme.resolve("stats/sz_applied")).trim());
                        any = true;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return any ? total : 0;
    }

    /** The numbered entries of a DAMON sysfs directory (kdamonds/0, contexts/0, schemes/0...). */
    private static List<Path> numbered(Path dir) throws IOException {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "[0-9]*")) {
            stream.forEach(entries::add);
        }
        return entries;
    }
}
