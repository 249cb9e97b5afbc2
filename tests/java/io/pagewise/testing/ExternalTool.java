package io.pagewise.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;

/**
 * External programs tests drive (vmtouch, nbdinfo, qemu-img...). A missing program fails the test under
 * {@code CI=true}, where .ci/run must have installed it, and skips it with a visible message elsewhere.
 */
public final class ExternalTool {
    private ExternalTool() {}

    /** Absolute path of a program on PATH, or null. */
    public static String find(String program) {
        String path = System.getenv("PATH");
        if (path == null) return null;
        for (String dir : path.split(File.pathSeparator)) {
            File candidate = new File(dir, program);
            if (candidate.isFile() && candidate.canExecute()) return candidate.getAbsolutePath();
        }
        return null;
    }

    /** The program's path; fails under CI=true, skips the test elsewhere, when it is missing. */
    public static String require(String program, String debianPackage) {
        String found = find(program);
        if (found != null) return found;
        String message = program + " is not installed (Debian package " + debianPackage + ")";
        if ("true".equals(System.getenv("CI"))) fail(message + "; .ci/run must install it");
        System.err.println("SKIPPED: " + message);
        assumeTrue(false, message + "; skipping");
        return null;
    }
}
