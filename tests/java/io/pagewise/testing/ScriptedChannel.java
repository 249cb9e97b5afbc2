package io.pagewise.testing;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;

/**
 * The peer of a handshake in memory: reads give the fuzzer's bytes, then end of stream; writes are kept. It checks
 * two invariants as they happen: a reader stops at end of stream (a second read there is a hang in the making),
 * and no single read asks for more than the reader's buffer limit (what the code promises to allocate at most).
 */
public final class ScriptedChannel implements ByteChannel {
    private final ByteBuffer input;
    private final int readLimit;
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();
    private boolean endSeen;
    private boolean open = true;

    /** @param readLimit the most bytes one read may ask for */
    public ScriptedChannel(byte[] input, int readLimit) {
        this.input = ByteBuffer.wrap(input);
        this.readLimit = readLimit;
    }

    @Override
    public int read(ByteBuffer dst) throws ClosedChannelException {
        if (!open) throw new ClosedChannelException();
        if (dst.remaining() > readLimit) {
            throw new AssertionError("a read asked for " + dst.remaining() + " bytes, over the limit of " + readLimit);
        }
        if (!input.hasRemaining()) {
            if (endSeen) throw new AssertionError("read again after the end of the stream: the reader does not stop");
            endSeen = true;
            return -1;
        }
        int n = Math.min(dst.remaining(), input.remaining());
        ByteBuffer chunk = input.slice();
        chunk.limit(n);
        dst.put(chunk);
        input.position(input.position() + n);
        return n;
    }

    @Override
    public int write(ByteBuffer src) throws ClosedChannelException {
        if (!open) throw new ClosedChannelException();
        int n = src.remaining();
        byte[] bytes = new byte[n];
        src.get(bytes);
        written.write(bytes, 0, n);
        return n;
    }

    /** {@return everything written so far} */
    public ByteBuffer written() {
        return ByteBuffer.wrap(written.toByteArray());
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() {
        open = false;
    }
}
