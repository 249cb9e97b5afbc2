package io.pagewise;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.stream.Collectors;

/** Run in a child JVM by {@link NativeLoaderTest}: reports what the loader did as key=value lines. */
public final class NativeLoaderProbe {
    private NativeLoaderProbe() {}

    public static void main(String[] args) throws Exception {
        System.out.println("available=" + Native.isAvailable());
        Throwable error = Native.loadError();
        System.out.println("error=" + (error == null ? "" : error.getClass().getName() + ": " + error.getMessage()));
        String[] names = new File(System.getProperty("java.io.tmpdir")).list((dir, name) -> name.startsWith("libpagewise"));
        System.out.println("leftovers=" + (names == null ? "" : Arrays.stream(names).collect(Collectors.joining(","))));
        // The library must work, not just load: one write and read in a mode that needs it (or the fallback).
        Path file = Files.createTempFile(Path.of(args[0]), "probe", ".dat");
        CacheMode mode = Native.isAvailable() ? CacheMode.EVICT : CacheMode.WRITEBACK;
        try (StorageFile storage = StorageFile.open(file, mode, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            storage.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 4096);
            ByteBuffer back = ByteBuffer.allocate(10);
            int n = storage.read(back, 4095);
            System.out.println("io=" + storage.isNative() + "," + storage.cacheMode() + "," + n + "," + back.get(1) + back.get(3));
        } finally {
            Files.delete(file);
        }
    }
}
