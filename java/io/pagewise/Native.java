package io.pagewise;

import io.pagewise.internal.Errno;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads {@code libpagewise.so} once per JVM: from {@code -Dpagewise.native.path=FILE} if set, else the copy inside
 * the jar, extracted to a private temporary file that is deleted as soon as it is loaded.
 * {@code -Dpagewise.native=false} skips loading; the library then uses its pure-Java path.
 *
 * <p>The jar carries the library for Linux on x86_64 and aarch64 with glibc 2.17 or later. Elsewhere (another
 * architecture or operating system, musl libc as on Alpine) it does not load, and {@link #loadError()} says on
 * which platform, why, and which cache modes still work: the buffered ones (WRITEBACK, WRITETHROUGH, UNSAFE) on the
 * pure-Java path, without page-cache residency.
 */
public final class Native {
    private static final String PATH_PROPERTY = "pagewise.native.path";
    private static final String ENABLE_PROPERTY = "pagewise.native";
    /** The platforms whose library the jar carries. */
    private static final String SUPPORTED = "linux-x86_64 and linux-aarch64 with glibc 2.17 or later";
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
            String override = System.getProperty(PATH_PROPERTY);
            if (override != null && !override.isEmpty()) {
                System.load(Path.of(override).toAbsolutePath().toString());
            } else {
                loadFromJar();
            }
            // Loading binds every native (JNI_OnLoad); a file without that, such as another build, binds none, and
            // this first call fails.
            Errno.readNames();
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
        text.append(". The jar carries it for ").append(SUPPORTED).append(". Without it WRITEBACK, WRITETHROUGH and"
                + " UNSAFE work on the pure-Java path; DIRECT, DIRECTSYNC, EVICT, DONTCACHE and page-cache residency"
                + " need it");
        UnsatisfiedLinkError explained = new UnsatisfiedLinkError(text.toString());
        explained.initCause(error);
        return explained;
    }

    /** Whether this JVM runs on musl libc (Alpine): its mappings name the musl loader. */
    private static boolean usesMusl() {
        try {
            return Files.readString(Path.of("/proc/self/maps")).contains("ld-musl-");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static void loadFromJar() throws IOException {
        String resource = "/native/" + platform() + "/libpagewise.so";
        try (InputStream in = Native.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("the jar has no native library for " + platform() + " (looked for "
                        + resource + ")");
            }
            // createTempFile gives a unique, owner-only file, so concurrent JVMs never share or clobber one.
            Path copy = Files.createTempFile("libpagewise-", ".so");
            try {
                Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
                System.load(copy.toAbsolutePath().toString());
            } finally {
                if (!copy.toFile().delete()) copy.toFile().deleteOnExit();
            }
        }
    }
}
