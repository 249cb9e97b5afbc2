package io.pagewise.testing;

import io.pagewise.device.BlockDevice;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/** Data for tests to write and compare: the same seed gives the same bytes, so an expectation can be made again. */
public final class TestData {
    private TestData() {}

    /** {@return length pseudo-random bytes from seed} */
    public static byte[] random(long seed, int length) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }

    /** {@return every byte of device, read in one request} */
    public static byte[] readAll(BlockDevice device) throws IOException {
        ByteBuffer all = ByteBuffer.allocate((int) device.size());
        device.readFully(all, 0);
        return all.array();
    }

    /** {@return path, made a file of size bytes with nothing written (sparse where the file system allows)} */
    public static Path sparseFile(Path path, long size) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw")) {
            file.setLength(size);
        }
        return path;
    }

    /** {@return path, written with size pseudo-random bytes from seed} */
    public static Path randomFile(Path path, long seed, int size) throws IOException {
        return Files.write(path, random(seed, size));
    }
}
