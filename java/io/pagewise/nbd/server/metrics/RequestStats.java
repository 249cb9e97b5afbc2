package io.pagewise.nbd.server.metrics;

/**
 * Where the engine counts what it does. NbdServer passes its {@link io.pagewise.nbd.server.ServerStats}, whose counting
 * methods are not public API.
 */
public interface RequestStats {
    /** A request was read: it is in flight until {@link #requestAnswered()}. */
    void requestReceived();

    /** A request's answer was sent (or could not be). */
    void requestAnswered();

    /** A request was answered: failed when the answer was an error, including a request refused before it ran. */
    void request(int command, long length, boolean failed);

    /** A request to an export was answered after nanos since it was read; counted per export and by the server. */
    default void request(String export, int command, long length, boolean failed, long nanos) {
        request(command, length, failed);
    }

    /** The same, with the request's offset, for the breakdown of sizes and alignment. */
    default void request(String export, int command, long offset, long length, boolean failed, long nanos) {
        request(export, command, length, failed, nanos);
    }

    /** Payload buffers of this many bytes were taken by a request. */
    void payloadBuffersTaken(long bytes);

    /** Payload buffers of this many bytes were given back. */
    void payloadBuffersGiven(long bytes);
}
