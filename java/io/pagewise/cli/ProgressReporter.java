package io.pagewise.cli;

import io.pagewise.Native;
import io.pagewise.copy.CopyProgress;
import io.pagewise.internal.FileDescriptors;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Shows progress: a bar on a terminal, or {@code N/100} lines on a file descriptor (as nbdcopy does). */
final class ProgressReporter implements CopyProgress {
    private final OutputStream fd;
    private final PrintStream terminal;
    private final boolean isTerminal;
    private final long started = System.nanoTime();
    private int lastPercent = -1;
    private long lastDrawn;
    private long lastStreamed;

    private ProgressReporter(OutputStream fd, PrintStream terminal) {
        this.fd = fd;
        this.terminal = terminal;
        this.isTerminal = fd == null && stderrIsTerminal();
    }

    /**
     * Whether file descriptor 2 is a terminal: isatty(2), or without the native library where /proc says it
     * leads (System.console() looks at stdin and stdout instead, and on JDK 22+ is there without a terminal).
     */
    static boolean stderrIsTerminal() {
        if (Native.isAvailable()) return FileDescriptors.isTerminal(2);
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false;
        }
    }

    static ProgressReporter open(Integer descriptor, PrintStream err) throws IOException {
        if (descriptor == null) return new ProgressReporter(null, err);
        // Reopening through /proc works for pipes and files alike; append so that a file is not truncated.
        return new ProgressReporter(new FileOutputStream("/proc/self/fd/" + descriptor, true), null);
    }

    @Override
    public synchronized void progress(long done, long total) {
        if (total < 0) {
            unknownTotal(done);
            return;
        }
        int percent = total == 0 ? 100 : (int) (done * 100 / total);
        if (fd != null) {
            if (percent == lastPercent) return;
            lastPercent = percent;
            try {
                fd.write((percent + "/100\n").getBytes(StandardCharsets.US_ASCII));
                fd.flush();
            } catch (IOException e) {
                // a closed progress pipe must not fail the copy
            }
            return;
        }
        long now = System.nanoTime();
        if (isTerminal) {
            if (done < total && now - lastDrawn < 200_000_000L) return;
            lastDrawn = now;
            terminal.print("\r" + bar(done, total, now) + "\u001b[K");
        } else if (percent / 10 != lastPercent / 10 || lastPercent < 0) {
            terminal.println(bar(done, total, now));
        }
        lastPercent = percent;
        terminal.flush();
    }

    /**
     * A copy from a stream, whose end is not known: bytes and rate, on a terminal redrawn, else a line every 64 MiB;
     * nothing on the file descriptor, whose N/100 lines need the total (100/100 comes at the end).
     */
    private void unknownTotal(long done) {
        if (fd != null) return;
        long now = System.nanoTime();
        if (isTerminal) {
            if (now - lastDrawn < 200_000_000L) return;
            lastDrawn = now;
            terminal.print("\r" + streamed(done, now) + "\u001b[K");
        } else if (done >> 26 != lastStreamed >> 26) {
            terminal.println(streamed(done, now));
        }
        lastStreamed = done;
        terminal.flush();
    }

    private String streamed(long done, long now) {
        double seconds = Math.max((now - started) / 1e9, 1e-3);
        return String.format(Locale.ROOT, "%s of the input, %s/s", Main.bytes(done), Main.bytes((long) (done / seconds)));
    }

    private String bar(long done, long total, long now) {
        int width = 30;
        int filled = total == 0 ? width : (int) (done * width / total);
        double seconds = Math.max((now - started) / 1e9, 1e-3);
        double rate = done / seconds;
        long eta = rate > 0 ? (long) ((total - done) / rate) : 0;
        return String.format(Locale.ROOT, "[%s%s] %5.1f%% %s of %s, %s/s, ETA %d:%02d",
                "#".repeat(filled), "-".repeat(width - filled), total == 0 ? 100.0 : done * 100.0 / total,
                Main.bytes(done), Main.bytes(total), Main.bytes((long) rate), eta / 60, eta % 60);
    }

    synchronized void finish() {
        if (fd != null) {
            try {
                fd.close();
            } catch (IOException e) {
                // nothing to do
            }
        } else if (isTerminal) {
            terminal.println();
        }
    }
}
