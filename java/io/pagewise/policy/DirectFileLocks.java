package io.pagewise.policy;

import io.pagewise.internal.RawFile;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.StampedLock;

/**
 * The gate and size lock of a file, shared by every DIRECT policy open on it in this JVM. Two StorageFiles of one file
 * (a library user's, or two devices that {@code serve --dir} opened on a file resized in between) each had their own,
 * and a read-modify-write of a block through one could undo a write to that block through the other. Files the file
 * system gives no identity get locks of their own.
 */
final class DirectFileLocks {
    private static final Map<Object, DirectFileLocks> OPEN = new HashMap<>();

    /** Null for locks of their own, which nobody else looks up. */
    private final Object key;
    final BlockGate gate;
    /**
     * Shared by writes and fallocate, exclusive for resizes: a write reads the size it decides by under it. Not
     * reentrant, and none of its holders takes it again; cheaper per write than a ReentrantReadWriteLock, which
     * looks up each reader's hold count.
     */
    final StampedLock sizeLock = new StampedLock();
    /** Guarded by OPEN. */
    private int users;

    private DirectFileLocks(Object key, int block) {
        this.key = key;
        this.gate = new BlockGate(block);
    }

    /** The locks of file for a policy working in blocks of block bytes; {@link #release} when done. */
    static DirectFileLocks acquire(RawFile file, int block) {
        Object identity = file.identity();
        if (identity == null) return new DirectFileLocks(null, block);
        Object key = List.of(identity, block); // a gate knows one block size
        synchronized (OPEN) {
            DirectFileLocks locks = OPEN.computeIfAbsent(key, k -> new DirectFileLocks(k, block));
            locks.users++;
            return locks;
        }
    }

    /** The policy that acquired these is closed. */
    void release() {
        if (key == null) return;
        synchronized (OPEN) {
            if (--users == 0) OPEN.remove(key);
        }
    }
}
