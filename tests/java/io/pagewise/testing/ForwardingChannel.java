package io.pagewise.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;

/**
 * A channel that passes every call on to the one it wraps; a test's channel implements it (a record with a
 * {@code channel} component will do) and overrides only the call it changes, such as a write it tampers with.
 */
public interface ForwardingChannel extends ByteChannel {
    /** {@return the channel every call goes to} */
    ByteChannel channel();

    @Override
    default int read(ByteBuffer dst) throws IOException {
        return channel().read(dst);
    }

    @Override
    default int write(ByteBuffer src) throws IOException {
        return channel().write(src);
    }

    @Override
    default boolean isOpen() {
        return channel().isOpen();
    }

    @Override
    default void close() throws IOException {
        channel().close();
    }
}
