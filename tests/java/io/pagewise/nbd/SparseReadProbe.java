package io.pagewise.nbd;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * A child JVM for {@link SparseReadCallsTest}: serves a sparse file (data in its first MiB and at 32 MiB, holes
 * elsewhere) read-write under the mode given, and reads it through pagewise's own client, which asks for
 * structured replies, so every READ is planned with the file's holes.
 *
 * <p>Arguments: a directory to work in, a {@link CacheMode}, the number of 4 KiB READs.
 */
public final class SparseReadProbe {
    static final long SIZE = 64L << 20;

    private SparseReadProbe() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        CacheMode mode = CacheMode.valueOf(args[1]);
        int reads = Integer.parseInt(args[2]);
        Path file = dir.resolve("sparse-" + mode + "-" + reads + ".img");
        byte[] data = new byte[1 << 20];
        Arrays.fill(data, (byte) 7);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(SIZE);
            raf.write(data);
            raf.seek(32L << 20);
            raf.write(data);
        }
        try (FileDevice device = FileDevice.open(file, mode, StandardOpenOption.READ, StandardOpenOption.WRITE);
             NbdServer server = NbdServer.builder().export("", device).unixSocket(dir.resolve(reads + ".sock")).start();
             NbdClient client = NbdClient.connect(server.uri())) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
            long zeros = 0;
            for (int i = 0; i < reads; i++) {
                long offset = (i * 7L * 4096) % (48L << 20); // over data and holes alike
                client.readFully(buffer.clear(), offset);
                if (buffer.get(0) == 0) zeros++;
                if (buffer.get(0) != (offset < (1 << 20) || (offset >= 32L << 20 && offset < 33L << 20) ? 7 : 0)) {
                    throw new AssertionError("wrong data at " + offset);
                }
            }
            System.out.println("reads=" + reads + " holes=" + zeros);
        }
    }
}
