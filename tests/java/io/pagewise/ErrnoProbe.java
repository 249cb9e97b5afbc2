package io.pagewise;

import io.pagewise.system.SystemCallFailure;
import java.nio.file.Files;
import java.nio.file.Path;

/** Run in a child JVM by {@link ErrnoMappingTest}: one successful open, a marker line, then one failing open. */
public final class ErrnoProbe {
    private ErrnoProbe() {}

    public static void main(String[] args) throws Exception {
        System.out.println("available=" + Native.isAvailable());
        Path file = Files.createTempFile(Path.of(args[0]), "probe", ".dat");
        StorageFile.open(file).close();
        System.out.println("opened");
        try {
            StorageFile.open(Path.of(args[0]).resolve("missing")).close();
        } catch (java.nio.file.NoSuchFileException e) {
            System.out.println("failed=" + ((SystemCallFailure) e).errnoName());
        }
    }
}
