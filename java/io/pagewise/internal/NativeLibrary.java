package io.pagewise.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Makes the native calls of this package available: on JDK 17 to 21 by loading {@code libpagewise.so}, which binds
 * every native method. The jar's {@code META-INF/versions/22} holds a version of this class and of the bindings
 * that call the C library through {@code java.lang.foreign} instead, and load no library.
 */
public final class NativeLibrary {
    private static final String PATH_PROPERTY = "pagewise.native.path";

    private NativeLibrary() {}

    /** How the calls reach the C library: here through JNI. */
    public static String binding() {
        return "JNI";
    }

    /**
     * Loads the library from {@code -Dpagewise.native.path=FILE} if set, else the copy inside the jar for platform,
     * extracted to a private temporary file that is deleted as soon as it is loaded.
     *
     * @throws Throwable what went wrong: UnsatisfiedLinkError, IOException, SecurityException
     */
    public static void load(String platform) throws Throwable {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            System.load(Path.of(override).toAbsolutePath().toString());
        } else {
            loadFromJar(platform);
        }
        // Loading binds every native (JNI_OnLoad); a file without that, such as another build, binds none, and this
        // first call fails.
        Errno.readTexts();
    }

    private static void loadFromJar(String platform) throws IOException {
        String resource = "/native/" + platform + "/libpagewise.so";
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("the jar has no native library for " + platform + " (looked for "
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
