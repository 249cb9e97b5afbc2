/**
 * pagewise: control over the Linux page cache for Java storage software.
 *
 * <p>Exports the API only: {@link io.pagewise} (files, cache modes, residency), {@link io.pagewise.system} (failed
 * system calls and O_DIRECT alignment), {@link io.pagewise.backup} (dirty bitmaps for incremental backup),
 * {@link io.pagewise.device} (the block-device contract),
 * {@link io.pagewise.backends} (the devices that hold data: files, memory, synthetic and NBD devices),
 * {@link io.pagewise.filters} (devices that wrap devices), {@link io.pagewise.nbd} (what the NBD server and client
 * share: URIs, errors, TLS certificates), {@link io.pagewise.nbd.server} (the NBD server), {@link io.pagewise.nbd.client}
 * (the NBD client) and {@link io.pagewise.copy} (the copier). The wire format, TLS records, the JNI bindings,
 * the cache-mode policies, the internal helpers and the command line stay inside the module, so nothing outside it
 * can reach a raw system call.
 *
 * <p>The module loads its own native library ({@code libpagewise.so}, carried in the jar). JDK 24 and later warn
 * about that unless the application runs with {@code --enable-native-access=io.pagewise}; JDK 17 accepts the flag
 * too.
 */
module io.pagewise {
    requires jdk.httpserver;
    requires java.management;
    requires jdk.net;
    // sun.misc.Signal: serve --run passes SIGINT, SIGTERM and SIGHUP on to its command instead of stopping.
    requires jdk.unsupported;
    exports io.pagewise;
    exports io.pagewise.backends;
    exports io.pagewise.backup;
    exports io.pagewise.copy;
    exports io.pagewise.device;
    exports io.pagewise.filters;
    exports io.pagewise.nbd;
    exports io.pagewise.nbd.client;
    exports io.pagewise.nbd.server;
    exports io.pagewise.system;
}
