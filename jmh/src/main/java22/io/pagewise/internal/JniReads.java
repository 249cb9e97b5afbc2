package io.pagewise.internal;

import io.pagewise.Native;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The library's own JNI read path, reached from the benchmarks: {@link PositionalIo#read(int, IoVector, int, long[])}
 * is what {@link NativeRawFile#read} calls, without the typed exception and the counters around it. It lives
 * in the library's package because those calls are package-private; the benchmark jar puts both on one class path.
 * On JDK 22+ it is the JNI path only with {@code -Djdk.util.jar.enableMultiRelease=false}, as FfmVsJniReadBenchmark
 * forks; otherwise the jar's FFM PositionalIoBinding answers.
 */
public final class JniReads {
    public static final int EBADF = 9;
    public static final int EINVAL = Errno.EINVAL;

    private JniReads() {}

    /** @return a read-only descriptor for path (O_DIRECT when direct), opened by {@code file_descriptors.c} */
    public static int open(Path path, boolean direct) {
        if (!Native.isAvailable()) throw new IllegalStateException("pagewise native library not loaded", Native.loadError());
        int fd = FileDescriptors.open(path, direct ? FileDescriptors.DIRECT : 0);
        if (fd < 0) throw new IllegalStateException("open " + path + ": " + Errno.name(-fd));
        return fd;
    }

    public static void close(int fd) {
        FileDescriptors.close(fd);
    }

    /** @return bytes read into dst's remaining bytes (its position moved past them), or -errno */
    public static int read(int fd, ByteBuffer dst, long offset) {
        return (int) PositionalIo.read(fd, IoVector.of(dst, offset), 0, null);
    }
}
