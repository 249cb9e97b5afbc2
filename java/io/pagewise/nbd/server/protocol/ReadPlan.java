package io.pagewise.nbd.server.protocol;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A READ's data and hole runs, relative to its offset: planned by the {@link RequestExecutor}, which reads the data
 * runs into slices of the request's buffers it keeps here, and encoded by the {@link ReplyEncoder}, which sends those
 * same slices and the holes as OFFSET_HOLE chunks. One run of data unless structured replies allow holes; at most
 * {@link #MAX_RUNS}, the last ones merged into data.
 */
final class ReadPlan {
    /** Content chunks in one structured READ reply; extents beyond that are sent as data. */
    static final int MAX_RUNS = 64;

    private final long[] start = new long[MAX_RUNS];
    private final long[] length = new long[MAX_RUNS];
    private final boolean[] hole = new boolean[MAX_RUNS];
    /** The buffers each data run was read into, made once by the executor and sent as they are by the encoder. */
    private final ByteBuffer[][] data = new ByteBuffer[MAX_RUNS][];
    private int runs;

    /** {@return the number of runs} */
    int runs() { return runs; }

    /** {@return where run k starts, relative to the request's offset} */
    long start(int k) { return start[k]; }

    /** {@return run k's length} */
    long length(int k) { return length[k]; }

    /** {@return true when run k reads as zeros and is not read} */
    boolean hole(int k) { return hole[k]; }

    /** {@return the buffers data run k was read into} */
    ByteBuffer[] data(int k) { return data[k]; }

    /** Keeps the buffers data run k is read into, for its reply. */
    void data(int k, ByteBuffer[] buffers) { data[k] = buffers; }

    /**
     * Plans [offset, offset + total): with holes, from the device's extents (a failed lookup reads it all as data);
     * without, one data run.
     */
    void plan(BlockDevice device, long offset, long total, boolean holes) {
        runs = 0;
        if (total == 0) return;
        long covered = 0;
        if (holes) {
            try {
                for (Extent extent : device.extents(offset, total, MAX_RUNS)) {
                    long from = Math.max(extent.offset(), offset) - offset;
                    long to = Math.min(extent.end(), offset + total) - offset;
                    if (from != covered || to <= from) break;
                    boolean isHole = extent.hole() && runs < MAX_RUNS - 1;
                    if (runs > 0 && hole[runs - 1] == isHole) {
                        length[runs - 1] += to - from;
                    } else if (runs == MAX_RUNS - 1) {
                        break;
                    } else {
                        add(from, to - from, isHole);
                    }
                    covered = to;
                }
            } catch (IOException | RuntimeException e) {
                runs = 0;
                covered = 0;
            }
        }
        if (covered < total) {
            if (runs > 0 && !hole[runs - 1]) {
                length[runs - 1] += total - covered;
            } else {
                add(covered, total - covered, false);
            }
        }
    }

    private void add(long from, long n, boolean isHole) {
        start[runs] = from;
        length[runs] = n;
        hole[runs] = isHole;
        runs++;
    }
}
