package io.pagewise;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SeekableByteChannel;

/**
 * {@link StorageFile#channel()}: the file as a {@link SeekableByteChannel} with a position of its own, so that JDK
 * code written for channels and streams ({@link java.nio.channels.Channels#newInputStream}) reads and writes through
 * the file's cache mode. Each read and write is the file's positional one at the view's position.
 */
final class StorageFileChannel implements SeekableByteChannel {
    private final StorageFile file;
    private long position;
    private volatile boolean open = true;

    StorageFileChannel(StorageFile file) {
        this.file = file;
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws IOException {
        checkOpen();
        int n = file.read(dst, position);
        if (n > 0) position += n;
        return n;
    }

    @Override
    public synchronized int write(ByteBuffer src) throws IOException {
        checkOpen();
        checkWritable();
        int n = file.write(src, position);
        position += n;
        return n;
    }

    @Override
    public synchronized long position() throws IOException {
        checkOpen();
        return position;
    }

    @Override
    public synchronized SeekableByteChannel position(long newPosition) throws IOException {
        checkOpen();
        if (newPosition < 0) throw new IllegalArgumentException("position " + newPosition + " is negative");
        position = newPosition;
        return this;
    }

    @Override
    public long size() throws IOException {
        checkOpen();
        return file.size();
    }

    /** As {@link SeekableByteChannel#truncate}: shrinks the file when it is larger, never grows it. */
    @Override
    public synchronized SeekableByteChannel truncate(long size) throws IOException {
        checkOpen();
        checkWritable();
        if (size < 0) throw new IllegalArgumentException("size " + size + " is negative");
        if (size < file.size()) file.resize(size);
        if (position > size) position = size;
        return this;
    }

    @Override
    public boolean isOpen() {
        return open && file.isOpen();
    }

    /** Closes this view only; the StorageFile stays open. */
    @Override
    public void close() {
        open = false;
    }

    private void checkOpen() throws ClosedChannelException {
        if (!isOpen()) throw new ClosedChannelException();
    }

    /** As a FileChannel opened for reading only answers a write or truncate. */
    private void checkWritable() {
        if (!file.isWritable()) throw new java.nio.channels.NonWritableChannelException();
    }
}
