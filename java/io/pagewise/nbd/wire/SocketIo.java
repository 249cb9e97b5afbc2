package io.pagewise.nbd.wire;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;

/** Whole-buffer reads and writes on blocking channels. */
public final class SocketIo {
    private SocketIo() {}

    /** Fills dst; false on end of stream before the first byte, EOFException on end of stream after it. */
    public static boolean readFully(ByteChannel channel, ByteBuffer dst) throws IOException {
        boolean started = false;
        while (dst.hasRemaining()) {
            int n = channel.read(dst);
            if (n < 0) {
                if (!started) return false;
                throw new EOFException("peer closed the connection in the middle of a message");
            }
            started |= n > 0;
        }
        return true;
    }

    public static void readExactly(ByteChannel channel, ByteBuffer dst) throws IOException {
        if (!readFully(channel, dst) && dst.hasRemaining()) {
            throw new EOFException("peer closed the connection");
        }
    }

    /** Reads and drops length bytes through scratch, so that nothing of that size is allocated. */
    public static void skip(ByteChannel channel, long length, ByteBuffer scratch) throws IOException {
        while (length > 0) {
            scratch.clear().limit((int) Math.min(scratch.capacity(), length));
            readExactly(channel, scratch);
            length -= scratch.position();
        }
    }

    public static void writeFully(GatheringByteChannel channel, ByteBuffer[] buffers, int count) throws IOException {
        int first = 0;
        while (first < count) {
            channel.write(buffers, first, count - first);
            while (first < count && !buffers[first].hasRemaining()) first++;
        }
    }

    public static void writeFully(ByteChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) channel.write(buffer);
    }
}
