package io.pagewise;

import io.pagewise.internal.Memory;
import io.pagewise.internal.NativeLibrary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Makes the library's calls into the C library available, once per JVM. On JDK 17 to 21 it loads
 * {@code libpagewise.so} (JNI): from {@code -Dpagewise.native.path=FILE} if set, else the copy inside the jar,
 * extracted to a private temporary file that is deleted as soon as it is loaded. On JDK 22 and later the jar (a
 * multi-release jar) calls the C library through {@code java.lang.foreign} (FFM) and loads no library;
 * {@code -Djdk.util.jar.enableMultiRelease=false} makes such a JVM use the JNI library instead.
 * {@code -Dpagewise.native=false} skips both; the library then uses its pure-Java path.
 *
 * <p>The jar carries the library for Linux on x86_64 and, when its build had the cross compiler, aarch64, with glibc
 * 2.17 or later. Elsewhere (another architecture or operating system, musl libc as on Alpine) it does not load, and
 * {@link #loadError()} says on which platform, why, which platforms this jar carries, and which cache modes still
 * work: the buffered ones (WRITEBACK, WRITETHROUGH, UNSAFE) on the pure-Java path, without page-cache residency.
 */
public final class Native {
    private static final String ENABLE_PROPERTY = "pagewise.native";
    /** The platforms the FFM calls know (their system call numbers and struct layouts). */
    private static final String FFM_PLATFORMS = "linux-x86_64 and linux-aarch64 with glibc 2.17 or later";
    /** The platforms native/build.sh builds the library for; a jar carries those its build had a compiler for. */
    private static final List<String> BUILT_PLATFORMS = List.of("linux-x86_64", "linux-aarch64");
    private static final Throwable LOAD_ERROR = explained(load());

    private Native() {}

    /** {@return true when the native library is loaded and every CacheMode is usable} */
    public static boolean isAvailable() {
        return LOAD_ERROR == null;
    }

    /** {@return why the native library is not available, or null when it is} */
    public static Throwable loadError() {
        return LOAD_ERROR;
    }

    /**
     * {@return how the library reaches the C library in this JVM: {@code "JNI"} (the bundled {@code libpagewise.so})
     * or {@code "FFM"} (JDK 22 and later, no library to load); also when {@link #isAvailable()} is false}
     */
    public static String binding() {
        return NativeLibrary.binding();
    }

    /**
     * {@return where {@link StorageFile#readAsync} and {@link StorageFile#writeAsync} run in this JVM: {@code
     * "io_uring"}, or {@code "threads (why)"} where io_uring is absent or refused (Linux before 5.6, a seccomp
     * profile), the native calls are not available, or {@code -Dpagewise.async=threads} asks for the pool} Asking
     * starts the engine.
     */
    public static String asyncPath() {
        return io.pagewise.internal.AsyncIo.shared().path();
    }

    /** {@return the {@code os-arch} directory name the jar uses for this JVM, such as {@code linux-x86_64}} */
    public static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).replace(" ", "");
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (arch.equals("amd64") || arch.equals("x86-64")) arch = "x86_64";
        if (arch.equals("arm64")) arch = "aarch64";
        return os + "-" + arch;
    }

    static void require(String what) {
        if (LOAD_ERROR != null) {
            throw new UnsupportedOperationException(what + " needs the pagewise native library, which is "
                    + LOAD_ERROR.getMessage(), LOAD_ERROR);
        }
    }

    private static Throwable load() {
        try {
            if ("false".equalsIgnoreCase(System.getProperty(ENABLE_PROPERTY))) {
                return new UnsupportedOperationException("disabled by -D" + ENABLE_PROPERTY + "=false");
            }
            NativeLibrary.load(platform());
            Memory.nativeCallsLoaded();
            return null;
        } catch (Throwable e) {
            return e;
        }
    }

    /**
     * The load failure in the words a user needs: the platform, the reason, what still works. The original error
     * stays the cause.
     */
    private static Throwable explained(Throwable error) {
        if (error == null) return null;
        StringBuilder text = new StringBuilder("not loaded on ").append(platform());
        if (usesMusl()) text.append(" (musl libc, which is not supported)");
        text.append(": ").append(error.getMessage());
        if (NativeLibrary.binding().equals("FFM")) {
            text.append(". On JDK 22 and later the library calls the C library through FFM, on ").append(FFM_PLATFORMS)
                    .append(", with native access enabled (--enable-native-access=io.pagewise on the module path,"
                            + " ALL-UNNAMED on the class path)");
        } else {
            List<String> carried = carriedPlatforms();
            text.append(carried.isEmpty() ? ". The jar carries it for no platform"
                    : ". The jar carries it for " + inWords(carried) + " with glibc 2.17 or later");
        }
        List<String> pureJava = new ArrayList<>();
        List<String> needing = new ArrayList<>();
        for (CacheMode mode : CacheMode.values()) (mode.needsNative() ? needing : pureJava).add(mode.name());
        needing.add("page-cache residency");
        text.append(". Without it ").append(inWords(pureJava)).append(" work on the pure-Java path; ")
                .append(inWords(needing)).append(" need it");
        UnsatisfiedLinkError explained = new UnsatisfiedLinkError(text.toString());
        explained.initCause(error);
        return explained;
    }

    /**
     * The platforms whose library is on the class path, that is in the jar: a jar built without the cross compiler
     * lacks linux-aarch64. A library built on another host is named for that host, so this JVM's platform is looked
     * for too.
     */
    private static List<String> carriedPlatforms() {
        List<String> candidates = new ArrayList<>(BUILT_PLATFORMS);
        if (!candidates.contains(platform())) candidates.add(platform());
        List<String> carried = new ArrayList<>();
        for (String candidate : candidates) {
            // Where NativeLibrary (JNI) looks for it.
            if (Native.class.getResource("/native/" + candidate + "/libpagewise.so") != null) carried.add(candidate);
        }
        return carried;
    }

    /** "a", "a and b", "a, b and c". */
    private static String inWords(List<String> names) {
        int last = names.size() - 1;
        return last == 0 ? names.get(0) : String.join(", ", names.subList(0, last)) + " and " + names.get(last);
    }

    /** Whether this JVM runs on musl libc (Alpine): its mappings name the musl loader. */
    private static boolean usesMusl() {
        try {
            return Files.readString(Path.of("/proc/self/maps")).contains("ld-musl-");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
