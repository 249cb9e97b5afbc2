package io.pagewise.backup;

import io.pagewise.Extent;
import static io.pagewise.backup.BitmapFileFormat.*;

import io.pagewise.internal.FileKinds;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A persistent record of which parts of an image were written: one bit per {@link #granularity()} bytes, kept in a
 * file of its own. It never misses a write, whatever ends the process: a bit that a write sets reaches stable storage
 * (fdatasync of the bitmap file) before the write itself is made, so that the data cannot be on disk without its
 * bit. Writes that set bits at the same time share one fdatasync; a write whose bits are already set costs nothing.
 *
 * <p>What the bitmap cannot vouch for, it marks {@linkplain #isValid() invalid}: an image changed while no bitmap
 * recorded (its size differs, or its modification time differs from the one saved at the last clean close or, after
 * an unclean end, is later than the last change recorded here or earlier than that run's open), or a bitmap whose bits
 * could not be saved. An invalid bitmap reports the whole image as changed, until {@link #clear()} starts a new
 * generation.
 *
 * <p>One process at a time may have a bitmap file open: it is locked ({@link FileChannel#tryLock()}) while open.
 *
 * <p>The file is a 4 KiB header (magic, version, flags, granularity, image size, generation, the image's modification
 * time at the last clean close, or at open while in use, the name, a CRC32C) followed by the bits, least significant
 * bit first, and a 16-byte trailer: a time before which every change made through the bitmap had ended, and its
 * complement.
 */
public final class DirtyBitmap implements Closeable {
    /** The granularity used unless one is given: 64 KiB, qemu's default for dirty bitmaps. */
    public static final long DEFAULT_GRANULARITY = 64 << 10;
    private static final int PAGE = 4096;

    private final Path file;
    private final Path image;
    private final String name;
    private final long imageSize;
    private final long granularity;
    private final long chunks;
    private final FileChannel channel;
    private final Object lock = new Object();
    /** Guarded by lock: the bits, the pages of the file not yet written, and the sequence of bit changes. */
    private final BitSet bits;
    private final BitSet unsavedPages = new BitSet();
    private long changes;
    private boolean valid;
    private long generation;
    private boolean closed;
    /** Held by the thread that saves; savedChanges is the last change number known to be on stable storage. */
    private final Object saveLock = new Object();
    /** Held shared by each change from its record to its end, and exclusively by clear(). */
    private final ReentrantReadWriteLock generations = new ReentrantReadWriteLock();
    private volatile long savedChanges;
    /**
     * In nanoseconds since the epoch, what the trailer says: every change made through this bitmap ended before it.
     * After an unclean end, an image modified later than that was changed by someone else. Guarded by trailerLock.
     */
    private long changesEndedBefore;
    private final Object trailerLock = new Object();

    private DirtyBitmap(Path file, Path image, String name, long imageSize, long granularity, FileChannel channel,
                        BitSet bits, boolean valid, long generation) {
        this.file = file;
        this.image = image;
        this.name = name;
        this.imageSize = imageSize;
        this.granularity = granularity;
        this.chunks = (imageSize + granularity - 1) / granularity;
        this.channel = channel;
        this.bits = bits;
        this.valid = valid;
        this.generation = generation;
    }

    /**
     * Opens the bitmap file, or creates it: a new bitmap starts clean, recording from now on. An existing one must
     * have the same granularity; it is marked invalid when the image's size or modification time changed since its
     * last clean close, or, after an unclean end (the process killed, a power cut), when the image was modified after
     * the last change recorded through it or its modification time is earlier than when that run opened it (an older
     * copy put back). An empty or cut-short file is refused. The file is marked in use, and locked against other
     * openers, until {@link #close()}.
     *
     * @param file        the bitmap file
     * @param name        the bitmap's name (as in {@code qemu:dirty-bitmap:NAME}); stored, and checked on reopening
     * @param image       the image the bitmap records, for its modification time; null when it is no file
     * @param imageSize   the image's size in bytes
     * @param granularity bytes per bit, a power of two from 512 to 1 GiB
     * @return the open bitmap
     * @throws IOException when the file cannot be read or written, is not a regular file or a bitmap file, was made
     *                     with another name or granularity, or is open elsewhere (in this process or another); the
     *                     message names the file and what is wrong
     */
    public static DirtyBitmap open(Path file, String name, Path image, long imageSize, long granularity)
            throws IOException {
        if (granularity < 512 || granularity > (1L << 30) || Long.bitCount(granularity) != 1) {
            throw new IllegalArgumentException("granularity " + granularity + ": expected a power of two from 512 to 1G");
        }
        if ((imageSize + granularity - 1) / granularity > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("granularity " + granularity + " is too small for an image of "
                    + imageSize + " bytes: at most " + Integer.MAX_VALUE + " bits");
        }
        if (name.isEmpty() || name.getBytes(StandardCharsets.UTF_8).length > 1024) {
            throw new IllegalArgumentException("bitmap name '" + name + "': expected 1 to 1024 bytes");
        }
        FileKinds.requireFileOrDevice(file);
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new IOException(file + ": a dirty bitmap is kept in a regular file, and this is a device");
        }
        boolean exists = Files.exists(file); // an empty one too: it is cut short, not new (reopen says so)
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            lock(channel, file);
            DirtyBitmap bitmap = exists ? reopen(file, name, image, imageSize, granularity, channel)
                    : new DirtyBitmap(file, image, name, imageSize, granularity, channel, new BitSet(), true, 1);
            bitmap.saveAll(IN_USE);
            return bitmap;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Two openers would each save their own bits over the other's: the second is refused. */
    private static void lock(FileChannel channel, Path file) throws IOException {
        try {
            if (channel.tryLock() == null) {
                throw new IOException(file + " is in use by another process (another server keeping this bitmap?): one"
                        + " at a time may record into a bitmap");
            }
        } catch (java.nio.channels.OverlappingFileLockException e) {
            throw new IOException(file + " is already open in this process: each bitmap may be kept once", e);
        }
    }

    private static DirtyBitmap reopen(Path file, String name, Path image, long imageSize, long granularity,
                                      FileChannel channel) throws IOException {
        long length = channel.size();
        BitmapFileFormat.Header saved = BitmapFileFormat.read(channel, file);
        int flags = saved.flags();
        long savedModified = saved.modified();
        if (!saved.name().equals(name)) {
            throw new IOException(file + " holds bitmap '" + saved.name() + "', not '" + name + "'");
        }
        if (saved.granularity() != granularity) {
            throw new IOException(file + " has a granularity of " + saved.granularity() + " bytes, not " + granularity
                    + ": give that granularity, or " + START_AFRESH);
        }
        boolean valid = (flags & INVALID) == 0 && saved.imageSize() == imageSize;
        // A clean close saved the image's modification time: a different one means writes we did not see. After an
        // unclean end (IN_USE) the bits are still complete, since each reached the disk before its write, but only
        // for changes made through the bitmap: the trailer says when the last of those had ended, and an image
        // modified later was changed by someone else since. One modified earlier than when that run saved the
        // header (at open) is another file: an older copy restored over it (cp -p, rsync -a).
        if (valid && image != null) {
            long modified = modified(image);
            if ((flags & IN_USE) == 0 ? modified != savedModified
                    : modified > changesEndedBefore(channel, (imageSize + granularity - 1) / granularity)
                            || modified < savedModified) {
                valid = false;
            }
        }
        BitSet bits = new BitSet();
        if (valid) {
            long chunks = (imageSize + granularity - 1) / granularity;
            long bitBytes = (chunks + 7) / 8;
            if (length < HEADER + bitBytes) {
                throw new IOException(file + " is " + length + " bytes long, shorter than the header and the bits of "
                        + chunks + " chunks need (" + (HEADER + bitBytes) + "): cut short; " + START_AFRESH);
            }
            ByteBuffer data = ByteBuffer.allocate((int) bitBytes);
            readFully(channel, data, HEADER);
            bits = BitSet.valueOf(data.flip());
        }
        return new DirtyBitmap(file, image, name, imageSize, granularity, channel, bits, valid, saved.generation());
    }

    /** {@return the name the bitmap was opened with} */
    public String name() { return name; }

    /** {@return the bytes each bit stands for} */
    public long granularity() { return granularity; }

    /** {@return the size of the image the bitmap records} */
    public long imageSize() { return imageSize; }

    /** {@return the generation: 1 for a new bitmap, one more after each {@link #clear()}} */
    public long generation() {
        synchronized (lock) {
            return generation;
        }
    }

    /** {@return false when the bitmap cannot say what changed, and reports everything as changed} */
    public boolean isValid() {
        synchronized (lock) {
            return valid;
        }
    }

    /** A change to the image that the bitmap records: a write, a zeroing, a trim. */
    @FunctionalInterface
    public interface Change {
        /**
         * Makes the change.
         *
         * @throws IOException when it fails
         */
        void make() throws IOException;
    }

    /**
     * Records that [offset, offset + length) changes, then makes the change: the record is on stable storage before
     * change runs, and a {@link #clear()} waits for changes in progress, so no change falls between two generations.
     * A range already recorded costs no I/O.
     *
     * @param offset the start of the range
     * @param length its length
     * @param change what changes the range
     * @throws IOException when the bitmap cannot be saved (change is then not made), or what change throws
     */
    public void record(long offset, long length, Change change) throws IOException {
        generations.readLock().lock();
        try {
            mark(offset, length);
            change.make();
        } finally {
            generations.readLock().unlock();
        }
        changeEnded();
    }

    /**
     * Moves the trailer's time past the change that just ended, at most once a millisecond: the end of this
     * millisecond, by the clock the kernel stamps modification times with. Not synced: it serves a restart after
     * the process died, where the page cache keeps it; lost at a power cut, it errs towards invalid.
     */
    private void changeEnded() {
        if (image == null) return;
        long endOfMillisecond = (System.currentTimeMillis() + 1) * 1_000_000L;
        synchronized (trailerLock) {
            if (endOfMillisecond <= changesEndedBefore) return;
            changesEndedBefore = endOfMillisecond;
            try {
                writeFully(trailer(endOfMillisecond), trailerAt(chunks));
            } catch (IOException e) {
                // The change itself was made. A trailer left behind only makes a restart after an unclean end call
                // the bitmap invalid; a closed bitmap saved the image's modification time instead.
            }
        }
    }

    private void mark(long offset, long length) throws IOException {
        if (length <= 0) return;
        if (offset < 0 || offset > imageSize - length) {
            throw new IllegalArgumentException("range at " + offset + " (+" + length + ") is outside the image");
        }
        int first = (int) (offset / granularity);
        int last = (int) ((offset + length - 1) / granularity);
        long change;
        synchronized (lock) {
            if (closed) throw new IOException("dirty bitmap " + name + " (" + file + ") is closed");
            if (!valid || bits.nextClearBit(first) > last) return;
            bits.set(first, last + 1);
            unsavedPages.set(pageOf(first), pageOf(last) + 1);
            change = ++changes;
        }
        save(change);
    }

    /**
     * {@return the changed and unchanged runs of a range}, at most maxRuns of them, in order from offset ({@link
     * Extent#hole()} true for unchanged); all of it changed when the bitmap is invalid
     *
     * @param offset  the start of the range
     * @param length  its length
     * @param maxRuns the most runs wanted, at least 1
     */
    public List<Extent> runs(long offset, long length, int maxRuns) {
        List<Extent> runs = new ArrayList<>();
        long end = Math.min(imageSize, offset + length);
        synchronized (lock) {
            if (!valid) return List.of(new Extent(offset, end - offset, false));
            long at = offset;
            while (at < end && runs.size() < maxRuns) {
                int chunk = (int) (at / granularity);
                boolean dirty = bits.get(chunk);
                int next = dirty ? bits.nextClearBit(chunk) : bits.nextSetBit(chunk);
                long runEnd = next < 0 ? end : Math.min(end, next * granularity);
                runs.add(new Extent(at, runEnd - at, !dirty));
                at = runEnd;
            }
        }
        return runs;
    }

    /**
     * Starts a new generation: every bit clear and the bitmap valid, on stable storage before this returns. Writes
     * that run meanwhile are recorded in the new generation if they mark after the clear.
     *
     * @throws IOException when the file cannot be written
     */
    public void clear() throws IOException {
        generations.writeLock().lock();
        try {
            synchronized (saveLock) {
                synchronized (lock) {
                    if (closed) throw new IOException("dirty bitmap " + name + " (" + file + ") is closed");
                    bits.clear();
                    unsavedPages.clear();
                    valid = true;
                    generation++;
                    changes++;
                }
                saveAll(IN_USE);
            }
        } finally {
            generations.writeLock().unlock();
        }
    }

    /** Saves the bits, the image's modification time and a clean state; the bitmap takes no more marks. */
    @Override
    public void close() throws IOException {
        synchronized (saveLock) {
            synchronized (lock) {
                if (closed) return;
                closed = true;
            }
            try {
                saveAll(0);
            } finally {
                channel.close();
            }
        }
    }

    private int pageOf(int chunk) {
        return chunk / (PAGE * 8);
    }

    /** Writes the pages changed up to change number wanted and syncs them, unless another thread already has. */
    private void save(long wanted) throws IOException {
        synchronized (saveLock) {
            if (savedChanges >= wanted) return;
            long upTo;
            List<ByteBuffer> pages = new ArrayList<>();
            List<Long> at = new ArrayList<>();
            synchronized (lock) {
                upTo = changes;
                for (int page = unsavedPages.nextSetBit(0); page >= 0; page = unsavedPages.nextSetBit(page + 1)) {
                    pages.add(pageBytes(page));
                    at.add(HEADER + (long) page * PAGE);
                }
                unsavedPages.clear();
            }
            try {
                for (int i = 0; i < pages.size(); i++) writeFully(pages.get(i), at.get(i));
                channel.force(false);
            } catch (IOException e) {
                synchronized (lock) {
                    valid = false; // the bits in the file may now miss writes: say so, if the header can still be saved
                }
                try {
                    saveAll(IN_USE);
                } catch (IOException again) {
                    e.addSuppressed(again);
                }
                throw new IOException("cannot save dirty bitmap " + name + " to " + file + ": " + e.getMessage(), e);
            }
            savedChanges = upTo;
        }
    }

    /** The bytes of one page of bits, under lock. */
    private ByteBuffer pageBytes(int page) {
        int fromBit = page * PAGE * 8;
        int toBit = (int) Math.min(chunks, fromBit + (long) PAGE * 8);
        byte[] bytes = bits.get(fromBit, toBit).toByteArray();
        int length = (toBit - fromBit + 7) / 8;
        return ByteBuffer.wrap(java.util.Arrays.copyOf(bytes, length));
    }

    /** Writes the header with flags and every page of bits, and syncs; under saveLock or before publication. */
    private void saveAll(int flags) throws IOException {
        long pages = (chunks + PAGE * 8L - 1) / (PAGE * 8L);
        List<ByteBuffer> data = new ArrayList<>();
        long upTo;
        int savedFlags;
        long savedGeneration;
        synchronized (lock) {
            upTo = changes;
            savedFlags = flags | (valid ? 0 : INVALID);
            savedGeneration = generation;
            for (int page = 0; page < pages; page++) data.add(pageBytes(page));
            unsavedPages.clear();
        }
        // In use, the time at open: after an unclean end, an image modified before it was replaced meanwhile.
        ByteBuffer header = BitmapFileFormat.header(new BitmapFileFormat.Header(savedFlags, granularity, imageSize,
                savedGeneration, image != null ? modified(image) : 0, name));
        // Bits first, then the header that vouches for them.
        for (int page = 0; page < data.size(); page++) writeFully(data.get(page), HEADER + (long) page * PAGE);
        long trailerAt = trailerAt(chunks);
        synchronized (trailerLock) {
            changesEndedBefore = Math.max(changesEndedBefore, (System.currentTimeMillis() + 1) * 1_000_000L);
            writeFully(trailer(changesEndedBefore), trailerAt);
        }
        channel.truncate(trailerAt + TRAILER);
        channel.force(false);
        writeFully(header, 0);
        channel.force(true);
        savedChanges = Math.max(savedChanges, upTo);
    }

    private static long modified(Path image) throws IOException {
        return Files.getLastModifiedTime(image).to(TimeUnit.NANOSECONDS);
    }

    private void writeFully(ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) position += channel.write(buffer, position);
    }
}
