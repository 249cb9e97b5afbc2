package io.pagewise.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.PageCache;
import io.pagewise.Residency;
import java.io.IOException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The documented guarantee of the clean modes, ≤ 1 % of a file left in the page cache, checked two ways. */
public final class ResidencyCheck {
    public static final double LIMIT_PERCENT = 1.0;

    private ResidencyCheck() {}

    /** Asserts that at most 1 % of path's pages are cached, by our mincore and by vmtouch (skips/fails without it). */
    public static void assertAtMostOnePercent(Path path, String what) throws IOException {
        Residency ours = PageCache.residency(path);
        assertTrue(ours.percent() <= LIMIT_PERCENT, what + ": mincore says " + path + " is " + ours + " resident");
        ExternalTools.require("vmtouch");
        String output = ExternalTools.run(60, "vmtouch", path.toString()).assertOk("vmtouch").stdout();
        Matcher m = Pattern.compile("Resident Pages: (\\d+)/(\\d+)").matcher(output);
        assertTrue(m.find(), "vmtouch output: " + output);
        long resident = Long.parseLong(m.group(1));
        long total = Long.parseLong(m.group(2));
        assertTrue(total == 0 || 100.0 * resident / total <= LIMIT_PERCENT, what + ": vmtouch says " + resident + "/" + total
                + " pages of " + path + " resident");
    }
}
