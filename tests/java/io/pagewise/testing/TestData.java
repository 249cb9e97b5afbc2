package io.pagewise.testing;

import io.pagewise.device.BlockDevice;
import java.io.ByteArrayOutputStream;
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

    /** A positional read as FileChannel has it: fills from dst's position, returns the count, or -1 at the end. */
    @FunctionalInterface
    public interface PositionalRead {
        int read(ByteBuffer dst, long position) throws IOException;
    }

    /**
     * {@return every byte read by the loop written for FileChannel: read at the position, move on by the count, until
     * a read returns -1} A read that never returns -1 keeps it looping: callers bound it in time.
     */
    public static byte[] readToTheEnd(PositionalRead read, int bufferSize) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        ByteBuffer buffer = ByteBuffer.allocate(bufferSize);
        long position = 0;
        int n;
        while ((n = read.read(buffer.clear(), position)) != -1) {
            position += n;
            all.write(buffer.array(), 0, buffer.position());
        }
        return all.toByteArray();
    }
}
