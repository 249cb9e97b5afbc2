package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * One read or write request on its way from StorageFile to the system call: the remaining bytes of its buffers, in
 * order, at one file offset. Made once, where the request enters: {@link #toRead} and {@link #toWrite} check the
 * range and, for a read, that every buffer may be written; the total length and whether every buffer is direct are
 * found here, once. The policies, the raw files and {@link PositionalIo} under it take it as checked and look again
 * only to choose a way (direct or bounced, aligned or not), never to refuse.
 *
 * <p>A one-buffer request, the common small one, keeps its buffer without an array.
 *
 * <p>StorageFile's one-buffer calls take their thread's own request ({@link #toReadOnThread}, {@link #toWriteOnThread})
 * instead of a new one. A new one was allocated, 48 bytes a 4 KiB call, wherever the JIT did not inline every call it
 * went through: through FFM on JDK 25 mostly (the frames above the inlined downcall were compiled apart), and through
 * JNI too once files of two cache modes took turns in one JVM.
 */
public final class IoVector {
    private static final ThreadLocal<IoVector> ON_THREAD = ThreadLocal.withInitial(IoVector::new);

    private ByteBuffer one;
    private ByteBuffer[] many;
    /** The position of {@link #one} when the vector was made. */
    private int position;
    private long offset;
    private long length;
    private boolean direct;

    private IoVector() {}

    private IoVector(ByteBuffer one, ByteBuffer[] many, long offset, long length, boolean direct) {
        set(one, many, offset, length, direct);
    }

    private IoVector set(ByteBuffer one, ByteBuffer[] many, long offset, long length, boolean direct) {
        this.one = one;
        this.many = many;
        this.position = one == null ? 0 : one.position();
        this.offset = offset;
        this.length = length;
        this.direct = direct;
        return this;
    }

    /**
     * {@link #toRead(ByteBuffer, long)} as the calling thread's own request, made again by its next call: for a call
     * that is done with it, and {@link #release}s it, before the thread makes another. Nothing may keep it.
     */
    public static IoVector toReadOnThread(ByteBuffer dst, long offset) {
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        return toWriteOnThread(dst, offset);
    }

    /** {@link #toWrite(ByteBuffer, long)} as the calling thread's own request: see {@link #toReadOnThread}. */
    public static IoVector toWriteOnThread(ByteBuffer src, long offset) {
        int length = src.remaining();
        checkRange(offset, length);
        IoVector own = ON_THREAD.get();
        // Still in use: a call made from inside another on this thread gets a request of its own.
        if (own.one != null || own.many != null) own = new IoVector();
        return own.set(src, null, offset, length, src.isDirect());
    }

    /** Lets go of the buffers, which a thread's own request would otherwise keep reachable until its next call. */
    public void release() {
        one = null;
        many = null;
    }

    /**
     * A read into the remaining bytes of dst at offset.
     *
     * @throws IllegalArgumentException when dst is read-only, or the range is negative or overflows
     */
    public static IoVector toRead(ByteBuffer dst, long offset) {
        // JNI could fill a read-only direct buffer behind its back; refuse like FileChannel does.
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        return one(dst, offset);
    }

    /** {@link #toRead(ByteBuffer, long)} into several buffers, filled in order. */
    public static IoVector toRead(ByteBuffer[] dsts, long offset) {
        if (dsts.length == 1) return toRead(dsts[0], offset);
        for (ByteBuffer dst : dsts) {
            if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        }
        return many(dsts, offset);
    }

    /**
     * A write of the remaining bytes of src at offset.
     *
     * @throws IllegalArgumentException when the range is negative or overflows
     */
    public static IoVector toWrite(ByteBuffer src, long offset) {
        return one(src, offset);
    }

    /** {@link #toWrite(ByteBuffer, long)} of several buffers, in order. */
    public static IoVector toWrite(ByteBuffer[] srcs, long offset) {
        return srcs.length == 1 ? one(srcs[0], offset) : many(srcs, offset);
    }

    /**
     * A request of this module's own, such as a bounce buffer's span, whose range its maker derived from a checked
     * one: nothing is checked but whether the buffers are direct.
     */
    public static IoVector of(ByteBuffer buffer, long offset) {
        return new IoVector(buffer, null, offset, buffer.remaining(), buffer.isDirect());
    }

    /** {@link #of(ByteBuffer, long)} of several buffers. */
    public static IoVector of(ByteBuffer[] buffers, long offset) {
        if (buffers.length == 1) return of(buffers[0], offset);
        return new IoVector(null, buffers, offset, Buffers.remaining(buffers), Buffers.allDirect(buffers));
    }

    private static IoVector one(ByteBuffer buffer, long offset) {
        int length = buffer.remaining();
        checkRange(offset, length);
        return new IoVector(buffer, null, offset, length, buffer.isDirect());
    }

    private static IoVector many(ByteBuffer[] buffers, long offset) {
        long length = Buffers.remaining(buffers);
        checkRange(offset, length);
        return new IoVector(null, buffers, offset, length, Buffers.allDirect(buffers));
    }

    /** The checks of a file range: what StorageFile says of a bad offset or length, everywhere. */
    public static void checkRange(long offset, long length) {
        if (offset < 0) throw new IllegalArgumentException("offset " + offset + " is negative");
        if (length < 0) throw new IllegalArgumentException("length " + length + " is negative");
        if (offset + length < 0) throw new IllegalArgumentException("offset " + offset + " + length " + length + " overflows");
    }

    /** {@return where in the file the request starts} */
    public long offset() { return offset; }

    /** {@return the bytes the request moves: its buffers' remaining bytes when it was made} */
    public long length() { return length; }

    /** {@return true when every buffer is direct, so the kernel can take them as they are} */
    public boolean isDirect() { return direct; }

    /** {@return the buffer of a one-buffer request, or null} */
    public ByteBuffer single() { return one; }

    /** {@return the position of the one buffer when the request was made} */
    int position() { return position; }

    /** {@return the buffers of a request of several, or null for one buffer} (no array made) */
    ByteBuffer[] many() { return one == null ? many : null; }

    /** {@return the buffers, in order} (an array made on first use for a one-buffer request) */
    public ByteBuffer[] buffers() {
        ByteBuffer[] buffers = many;
        if (buffers == null) many = buffers = new ByteBuffer[] {one};
        return buffers;
    }
}
