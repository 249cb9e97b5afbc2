package io.pagewise.nbd.server;

/**
 * Where the engine counts the requests it answers. NbdServer passes its {@link io.pagewise.nbd.ServerStats}, whose
 * counting methods are not public API.
 */
@FunctionalInterface
public interface RequestStats {
    /** A request was answered: failed when the answer was an error, including a request refused before it ran. */
    void request(int command, long length, boolean failed);
}
