package io.pagewise.testing;

import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.StorageFile;
import java.lang.module.ModuleDescriptor;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Collectors;

/**
 * Run by {@code ModulePathTest} in a child JVM that has the library on the module path and this class on the class
 * path (so it uses only what the module exports). Reports what it saw as key=value lines.
 */
public final class ModulePathProbe {
    private ModulePathProbe() {}

    public static void main(String[] args) throws Exception {
        Module library = StorageFile.class.getModule();
        System.out.println("module=" + library.getName());
        ModuleDescriptor descriptor = library.getDescriptor();
        System.out.println("exports=" + (descriptor == null ? "" : descriptor.exports().stream()
                .map(ModuleDescriptor.Exports::source).sorted().collect(Collectors.joining(","))));
        System.out.println("available=" + Native.isAvailable());
        Throwable error = Native.loadError();
        System.out.println("error=" + (error == null ? "" : error));
        // The native library must work, not just load: EVICT needs it.
        Path file = Files.createTempFile(Path.of(args[0]), "module-probe", ".dat");
        try (StorageFile storage = StorageFile.open(file, CacheMode.EVICT, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            storage.write(ByteBuffer.wrap(new byte[] {7, 8, 9}), 4096);
            ByteBuffer back = ByteBuffer.allocate(3);
            storage.read(back, 4096);
            System.out.println("io=" + storage.isNative() + "," + storage.cacheMode() + "," + back.get(0) + back.get(2));
        } finally {
            Files.delete(file);
        }
    }
}
