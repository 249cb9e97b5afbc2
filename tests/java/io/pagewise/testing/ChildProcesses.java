package io.pagewise.testing;

import java.util.concurrent.TimeUnit;

/** Stopping a test's child process; no test framework, so the Lucene module's JUnit 4 tests compile it too. */
public final class ChildProcesses {
    private ChildProcesses() {}

    /**
     * Stops a child process: SIGTERM, up to 5 s for it to exit, then SIGKILL and 5 s more. Keeps an interrupt.
     *
     * @param process the process
     */
    public static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
