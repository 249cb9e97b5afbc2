package io.pagewise.backup;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.filters.DirtyBitmapFilter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

/**
 * A child process for {@link DirtyBitmapCrashTest}: writes random non-zero 4 KiB blocks of an image through a dirty
 * bitmap, from four threads, until it is killed, and prints "wrote" after each write. Arguments: image, bitmap file,
 * "fua" for durable writes (else "buffered"), and optionally how many writes to make in all before the threads idle
 * until killed.
 */
public final class BitmapWriterProbe {
    private BitmapWriterProbe() {}

    public static void main(String[] args) throws Exception {
        Path image = Path.of(args[0]);
        boolean fua = args.length > 2 && args[2].equals("fua");
        long limit = args.length > 3 ? Long.parseLong(args[3]) : Long.MAX_VALUE;
        java.util.concurrent.atomic.AtomicLong started = new java.util.concurrent.atomic.AtomicLong();
        FileDevice file = FileDevice.open(image, CacheMode.WRITEBACK, StandardOpenOption.READ, StandardOpenOption.WRITE);
        DirtyBitmapFilter device = new DirtyBitmapFilter(file,
                DirtyBitmap.open(Path.of(args[1]), "crash", image, file.size(), DirtyBitmap.DEFAULT_GRANULARITY));
        long blocks = device.size() / 4096;
        for (int t = 0; t < 4; t++) {
            long seed = t;
            Thread writer = new Thread(() -> {
                Random random = new Random(seed);
                ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
                try {
                    while (true) {
                        if (started.incrementAndGet() > limit) Thread.sleep(Long.MAX_VALUE);
                        long at = Math.floorMod(random.nextLong(), blocks) * 4096;
                        buffer.clear().putLong(0, at | 1);
                        device.write(buffer, at, fua);
                        synchronized (System.out) {
                            System.out.println("wrote");
                            System.out.flush();
                        }
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                    System.exit(3);
                }
            });
            writer.start();
        }
    }
}
