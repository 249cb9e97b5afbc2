package io.pagewise.testing;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One LazyFS mount for a test class, for power-loss tests. Register it on a static field with
 * {@code @RegisterExtension}; the mount is made at the first {@link #mount()} call in the class, so tests that never
 * ask for it do not need LazyFS, and it is unmounted, stopped and deleted after the class, whatever its tests did.
 * Without LazyFS or FUSE every test that asks skips with a message, or fails under CI=true ({@link LazyFsMount#mount}).
 */
public final class LazyFsExtension implements AfterAllCallback {
    private Path parent;
    private LazyFsMount mount;
    /** Why mounting failed: thrown again to every later caller instead of mounting again. */
    private Throwable refused;

    /**
     * {@return the class's LazyFS mount, made on the first call}
     *
     * @throws IOException when a file for the mount cannot be made
     */
    public synchronized LazyFsMount mount() throws IOException {
        if (refused != null) throw rethrown(refused);
        if (mount == null) {
            parent = Files.createTempDirectory("pagewise-lazyfs-");
            try {
                mount = LazyFsMount.mount(parent, ExternalTools::unavailable);
            } catch (IOException | RuntimeException | Error e) {
                refused = e;
                Files.deleteIfExists(parent);
                parent = null;
                throw e;
            }
        }
        return mount;
    }

    private static RuntimeException rethrown(Throwable first) throws IOException {
        if (first instanceof IOException e) throw new IOException(e.getMessage(), e);
        if (first instanceof Error e) throw e;
        throw (RuntimeException) first;
    }

    /** Unmounts and deletes what {@link #mount()} made; fails the class if anything stays behind. */
    @Override
    public synchronized void afterAll(ExtensionContext context) throws IOException {
        if (mount != null) mount.close();
        mount = null;
        if (parent == null) return;
        try {
            Files.deleteIfExists(parent);
        } catch (DirectoryNotEmptyException e) {
            throw new IOException("the LazyFS mount left files behind in " + parent, e);
        } finally {
            parent = null;
        }
    }
}
