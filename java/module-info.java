/**
 * pagewise: control over the Linux page cache for Java storage software.
 *
 * <p>Exports the API only: {@link io.pagewise} (files, cache modes, residency), {@link io.pagewise.nbd} (the NBD
 * server, client and export contract) and {@link io.pagewise.copy} (the copier and its endpoints). The JNI bindings,
 * the cache-mode policies, the internal helpers and the command line stay inside the module, so nothing outside it
 * can reach a raw system call.
 *
 * <p>The module loads its own native library ({@code libpagewise.so}, carried in the jar). On JDK 22 and later run
 * with {@code --enable-native-access=io.pagewise} to allow that without a warning.
 */
module io.pagewise {
    exports io.pagewise;
    exports io.pagewise.copy;
    exports io.pagewise.nbd;
}
