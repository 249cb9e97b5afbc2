package io.pagewise;

import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.internal.BufferPool;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A warmed 4 KiB read or write of a direct buffer allocates nothing, through JNI (JDK 17) and FFM (the ffm-suite on
 * JDK 25): counted by the thread's allocated bytes, not timed. Files of two cache modes take turns, as a server's
 * exports of several modes do, so that the call into the policy has more than one target. Through FFM a new request
 * per call was allocated (48 bytes): whether the JIT took it apart depended on what it had compiled first.
 */
@Timeout(120)
class SmallCallAllocationTest {
    private static final int SIZE = 4096;
    private static final int SLOTS = 256;
    private static final int CALLS = 10_000;
    private static final int ROUNDS = 60;
    /** Rounds in a row that must stay under a byte a call: the JIT may still be compiling before them. */
    private static final int QUIET_ROUNDS = 3;

    @TempDir
    Path dir;

    @Test
    void warmedSmallCallsAllocateNothing() throws Exception {
        CacheMode[] modes = {CacheMode.WRITEBACK, CacheMode.EVICT};
        StorageFile[] files = new StorageFile[modes.length];
        try {
            for (int i = 0; i < modes.length; i++) {
                Path path = dir.resolve(modes[i] + ".raw");
                Files.write(path, new byte[SIZE * SLOTS]);
                files[i] = StorageFile.open(path, modes[i], READ, WRITE);
            }
            ByteBuffer buffer = BufferPool.aligned(SIZE);
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            // HotSpot's own ThreadMXBean, by reflection: the tests are compiled into a module that does not read it
            Method allocated = Class.forName("com.sun.management.ThreadMXBean")
                    .getMethod("getThreadAllocatedBytes", long.class);
            long thread = Thread.currentThread().getId();
            List<String> perCall = new ArrayList<>();
            int quiet = 0;
            for (int round = 0; round < ROUNDS && quiet < QUIET_ROUNDS; round++) {
                long before = (long) allocated.invoke(threads, thread);
                for (int i = 0; i < CALLS; i++) {
                    StorageFile file = files[i % files.length];
                    long at = (long) (i % SLOTS) * SIZE;
                    file.write(buffer.clear(), at);
                    file.read(buffer.clear(), at);
                }
                double bytes = ((long) allocated.invoke(threads, thread) - before) / (2.0 * CALLS);
                perCall.add(String.format("%.1f", bytes));
                quiet = bytes < 1 ? quiet + 1 : 0;
            }
            if (quiet < QUIET_ROUNDS) {
                fail("4 KiB calls still allocate after " + ROUNDS + " rounds of " + CALLS + " reads and writes"
                        + " (bytes a call, round by round): " + perCall);
            }
        } finally {
            for (StorageFile file : files) {
                if (file != null) file.close();
            }
        }
    }
}
