package io.pagewise;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Run in a child JVM by {@link AsyncFallbackTest}: prints where asynchronous I/O runs, then writes and reads back a
 * batch through it in every cache mode, and prints "ok" when every byte came back.
 */
public final class AsyncFallbackProbe {
    private AsyncFallbackProbe() {}

    public static void main(String[] args) throws Exception {
        System.out.println("path=" + Native.asyncPath());
        Path dir = Path.of(args[0]);
        for (CacheMode mode : CacheMode.values()) {
            Path path = Files.createTempFile(dir, mode.name(), ".dat");
            try (StorageFile file = StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                List<ByteBuffer> sources = new ArrayList<>();
                long[] offsets = new long[16];
                for (int i = 0; i < 16; i++) {
                    ByteBuffer buffer = ByteBuffer.allocateDirect(8192).alignedSlice(4096);
                    for (int b = 0; b < 4096; b++) buffer.put(b, (byte) (i * 7 + b));
                    sources.add(buffer.limit(4096));
                    offsets[i] = i * 4096L;
                }
                for (CompletableFuture<Integer> done : file.writeAsync(sources, offsets)) done.get(10, TimeUnit.SECONDS);
                for (int i = 0; i < 16; i++) {
                    ByteBuffer back = ByteBuffer.allocate(4096);
                    if (file.readAsync(back, offsets[i]).get(10, TimeUnit.SECONDS) != 4096) throw new AssertionError(mode + " short");
                    for (int b = 0; b < 4096; b++) {
                        if (back.get(b) != (byte) (i * 7 + b)) throw new AssertionError(mode + " byte " + b + " of " + i);
                    }
                }
            }
        }
        System.out.println("ok");
    }
}
