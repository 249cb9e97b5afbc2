package io.pagewise.lucene;

import io.pagewise.StorageFile;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.BufferedIndexInput;

/**
 * A file read through a {@link StorageFile} in the mode its policy names (in WRITEBACK when the input reads in windows
 * of its own, which do the dropping): buffered reads of {@link #BUFFER_BYTES} at a time, so a sequential merge read
 * costs one system call per 64 KiB. Clones and slices share the file; only
 * the input that opened it closes it, and a clone or slice that was closed reads no more, as MMapDirectory's do.
 */
final class StorageIndexInput extends BufferedIndexInput {
    /** Large enough that a merge's sequential reads are few calls, small enough for the many clones a merge makes. */
    static final int BUFFER_BYTES = 64 << 10;
    /**
     * How many windows a merge input reads ahead of the one it is in. With one window of 2 MiB, a force-merge of
     * 1.6 GB took 1.15× MMapDirectory's time; with two, 1.09×, holding 270 MB of its sources at the peak instead of
     * 200. Two windows of 1 MiB held 170 MB and merged in 0.88–0.97× MMapDirectory's time.
     */
    static final int WINDOWS_AHEAD = 2;
    private final StorageFile file;
    private final long start;
    private final long length;
    private final IoTally.Counter counter;
    /** Run when the input that opened the file closes it; null for clones and slices. */
    private final Runnable onClose;
    /**
     * 0, or the window this input reads ahead and drops behind itself in: a reader moving into the next window drops
     * the one it left and starts reading the one after. Each clone and slice keeps its own place.
     */
    private final long window;
    /** The window of this input's last read (a file offset / window), -1 before the first. */
    private long lastWindow = -1;
    private boolean isClone;
    private boolean closed;

    StorageIndexInput(String description, StorageFile file, long start, long length, IoTally.Counter counter,
            long window, Runnable onClose) {
        super(description, BUFFER_BYTES);
        this.file = file;
        this.start = start;
        this.length = length;
        this.counter = counter;
        this.onClose = onClose;
        this.window = window;
    }

    @Override
    protected void readInternal(ByteBuffer buffer) throws IOException {
        if (closed) {
            // BufferedIndexInput takes the buffer as filled even when this throws: left empty, the next read asks again.
            buffer.limit(buffer.position());
            throw new AlreadyClosedException("already closed: " + this);
        }
        long position = getFilePointer();
        int wanted = buffer.remaining();
        if (position + wanted > length) {
            throw new EOFException("read past EOF: " + this + " (" + wanted + " bytes at " + position + " of "
                    + length + ")");
        }
        if (window > 0) followWindows(start + position);
        file.readFully(buffer, start + position);
        counter.read(wanted);
    }

    /**
     * Drops the window this input just left when it moved on to the next, and starts reading the one
     * {@link #WINDOWS_AHEAD} past the current; after a jump, reads the rest of the current window and those ahead.
     * The file was opened with the kernel's readahead off, so these are all the pages the input holds: three
     * windows, where the mode's own eviction and the kernel's readahead held up to 16 MiB behind and twice the
     * readahead size ahead, per open file.
     */
    private void followWindows(long at) throws IOException {
        long current = at / window;
        if (current == lastWindow) return;
        long end = start + length;
        if (lastWindow >= 0 && current == lastWindow + 1) {
            file.evict(lastWindow * window, window);
            long ahead = (current + WINDOWS_AHEAD) * window;
            if (ahead < end) file.prefetch(ahead, Math.min(window, end - ahead));
        } else {
            long ahead = Math.min(end, (current + 1 + WINDOWS_AHEAD) * window);
            if (ahead > at) file.prefetch(at, ahead - at);
        }
        lastWindow = current;
    }

    @Override
    protected void seekInternal(long position) throws IOException {
        if (position > length) {
            throw new EOFException("seek past EOF: " + this + " (to " + position + " of " + length + ")");
        }
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public StorageIndexInput clone() {
        StorageIndexInput clone = (StorageIndexInput) super.clone();
        clone.isClone = true;
        return clone;
    }

    @Override
    public StorageIndexInput slice(String description, long offset, long sliceLength) throws IOException {
        if (offset < 0 || sliceLength < 0 || sliceLength > length - offset) {
            throw new IllegalArgumentException("slice() " + description + " out of bounds: offset=" + offset
                    + ", length=" + sliceLength + ", fileLength=" + length + ": " + this);
        }
        StorageIndexInput slice = new StorageIndexInput(getFullSliceDescription(description), file, start + offset,
                sliceLength, counter, window, null);
        slice.isClone = true;
        return slice;
    }

    /**
     * Starts reading a range into the page cache where the file's mode {@linkplain StorageFile#canPrefetch()
     * prefetches}; Lucene 10 calls it before it reads (IndexInput.prefetch), Lucene 9 never does.
     *
     * @param offset the start of the range, in this input
     * @param bytes  its length
     * @throws IOException when the advice fails
     */
    public void prefetch(long offset, long bytes) throws IOException {
        if (offset < 0 || bytes < 0 || bytes > length - offset) {
            throw new IllegalArgumentException("prefetch of " + bytes + " bytes at " + offset + " is out of bounds: "
                    + this + " (length " + length + ")");
        }
        if (bytes > 0 && file.canPrefetch()) file.prefetch(start + offset, bytes);
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        if (isClone) return;
        try {
            // Nothing of the file was cached when a windowed input opened it: what its clones and slices left in
            // their last windows goes now.
            if (window > 0) file.evict();
        } finally {
            closeFile();
        }
    }

    private void closeFile() throws IOException {
        try {
            file.close();
        } finally {
            if (onClose != null) onClose.run();
        }
    }
}
