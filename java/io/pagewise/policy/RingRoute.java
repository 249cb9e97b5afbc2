package io.pagewise.policy;

/**
 * How an asynchronous ring runs one request of a cache mode: one read or write of {@code descriptor} with
 * {@code flags} ({@link io.pagewise.internal.RawFile#DSYNC}, {@link io.pagewise.internal.RawFile#DONTCACHE}), repeated
 * for the rest when the kernel moves fewer bytes, and {@code finish} run once the request has completed or failed
 * (what the mode holds while it is in flight, such as DIRECT's write gate).
 *
 * @param descriptor the file descriptor
 * @param flags      the per-call flags
 * @param shortIsEof whether a short read ends the request (O_DIRECT cannot go on at an unaligned offset)
 * @param finish     run once when the request is done, or null
 */
public record RingRoute(int descriptor, int flags, boolean shortIsEof, Runnable finish) {
    /** Runs {@link #finish}, if any. */
    public void done() {
        if (finish != null) finish.run();
    }
}
