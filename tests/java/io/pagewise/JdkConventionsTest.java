package io.pagewise;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.testing.TestData;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * StorageFile keeps FileChannel's conventions: buffer positions move by the bytes transferred, read returns -1 at
 * end of file, readFully throws EOFException, it is a Channel, and a second close waits for the first. The same
 * checks run on the pure-Java path in {@code FallbackPathTest}.
 */
@Timeout(60)
class JdkConventionsTest {
    private static final int SIZE = 10_000;

    @TempDir
    Path dir;

    private Path file(byte[] content) throws IOException {
        Path path = dir.resolve("data");
        Files.write(path, content);
        return path;
    }

    /** channel(): JDK code written for channels and streams works on a StorageFile, in every mode. */
    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void theChannelViewWorksWithTheJdksStreamsAndKeepsItsOwnPosition(CacheMode mode) throws Exception {
        Path path = dir.resolve("channel-" + mode);
        byte[] data = Fixtures.random(11, 3 * 4096);
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            java.nio.channels.SeekableByteChannel channel = file.channel();
            int written = 0;
            while (written < data.length) written += channel.write(ByteBuffer.wrap(data, written, 4096));
            assertEquals(data.length, channel.position());
            assertEquals(data.length, channel.size());
            channel.position(0);
            try (java.io.InputStream in = java.nio.channels.Channels.newInputStream(channel)) {
                assertArrayEquals(data, in.readAllBytes(), "read back through Channels.newInputStream");
            }
            assertFalse(channel.isOpen(), "closing the stream closes the view");
            assertTrue(file.isOpen(), "but not the file");
            java.nio.channels.SeekableByteChannel other = file.channel();
            assertEquals(0, other.position(), "each view has its own position");
            other.truncate(4096);
            assertEquals(4096, file.size());
            other.position(4096);
            assertEquals(-1, other.read(ByteBuffer.allocate(10)), "at the end");
            file.close();
            assertFalse(other.isOpen());
            assertThrows(ClosedChannelException.class, () -> other.read(ByteBuffer.allocate(1)));
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT", "EVICT", "DONTCACHE"})
    void readAndWriteMoveThePositionByTheBytesTransferred(CacheMode mode) throws Exception {
        byte[] content = Fixtures.random(1, SIZE);
        try (StorageFile file = StorageFile.open(file(content), mode, READ, WRITE)) {
            for (BufferKind kind : BufferKind.values()) {
                ByteBuffer src = Fixtures.source(kind, Fixtures.random(2, 3000));
                int limit = src.limit();
                file.write(src, 5000);
                assertEquals(limit, src.position(), kind + ": write moves the position to the limit");
                assertEquals(limit, src.limit(), kind + ": the limit stays");

                ByteBuffer inside = Fixtures.empty(kind, 4000);
                int start = inside.position();
                assertEquals(4000, file.read(inside, 100), kind.toString());
                assertEquals(start + 4000, inside.position(), kind + ": read moves the position by its count");

                ByteBuffer acrossTheEnd = Fixtures.empty(kind, 4000);
                start = acrossTheEnd.position();
                assertEquals(1000, file.read(acrossTheEnd, SIZE - 1000), kind + ": short only at the end");
                assertEquals(start + 1000, acrossTheEnd.position(), kind + ": by the short count");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT", "EVICT", "DONTCACHE"})
    void readReturnsMinusOneAtAndPastTheEndAsFileChannelDoes(CacheMode mode) throws Exception {
        Path path = file(Fixtures.random(3, SIZE));
        try (StorageFile file = StorageFile.open(path, mode);
             FileChannel channel = FileChannel.open(path)) {
            for (long offset : new long[] {SIZE, SIZE + 1, 1L << 40}) {
                for (BufferKind kind : BufferKind.values()) {
                    ByteBuffer buffer = Fixtures.empty(kind, 512);
                    int start = buffer.position();
                    assertEquals(channel.read(Fixtures.empty(kind, 512), offset), file.read(buffer, offset),
                            kind + " at " + offset + ": what FileChannel returns");
                    assertEquals(-1, file.read(buffer, offset), kind + " at " + offset);
                    assertEquals(start, buffer.position(), "nothing read, the position stays");
                }
            }
            assertEquals(0, file.read(ByteBuffer.allocate(0), SIZE + 1), "no room: 0, as FileChannel");
            assertEquals(0, file.read(ByteBuffer.allocate(0), 0));
        }
    }

    /** The loop people write for FileChannel: it spins forever when end of file is 0 instead of -1. */
    @Test
    void aReadLoopWrittenForFileChannelEnds() throws Exception {
        byte[] content = Fixtures.random(4, 3 * 4096 + 123);
        Path path = file(content);
        try (StorageFile file = StorageFile.open(path, CacheMode.EVICT)) {
            byte[] read = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> TestData.readToTheEnd(file::read, 4096), "the loop did not see the end of the file");
            assertArrayEquals(content, read);
        }
    }

    @Test
    void readFullyFillsTheBufferOrThrowsEofException() throws Exception {
        byte[] content = Fixtures.random(5, SIZE);
        try (StorageFile file = StorageFile.open(file(content), CacheMode.WRITEBACK)) {
            ByteBuffer whole = ByteBuffer.allocate(SIZE);
            file.readFully(whole, 0);
            assertEquals(SIZE, whole.position());
            assertArrayEquals(content, whole.array());

            ByteBuffer across = ByteBuffer.allocate(300);
            EOFException e = assertThrows(EOFException.class, () -> file.readFully(across, SIZE - 100));
            assertEquals(100, across.position(), "the bytes up to the end were read");
            assertTrue(e.getMessage().contains(file.path().toString()) && e.getMessage().contains(String.valueOf(SIZE)),
                    e.getMessage());
            assertThrows(EOFException.class, () -> file.readFully(ByteBuffer.allocate(1), SIZE));
            file.readFully(ByteBuffer.allocate(0), SIZE + 5); // nothing asked, nothing missing
        }
    }

    @Test
    void aStorageFileIsAChannel() throws Exception {
        Object file = StorageFile.open(file(new byte[100]), CacheMode.WRITEBACK);
        Channel channel = assertInstanceOf(Channel.class, file);
        assertTrue(channel.isOpen());
        channel.close();
        assertFalse(channel.isOpen());
        assertThrows(ClosedChannelException.class, () -> ((StorageFile) file).read(ByteBuffer.allocate(1), 0));
        channel.close(); // closing a closed channel does nothing
    }

    /**
     * Channel.close: "If some other thread has already invoked it, then another invocation will block until the first
     * invocation is complete". The first close here waits for a long write; the second must not return before the
     * descriptor is closed. (When the write is over before the second close begins, this cannot tell; it cannot
     * fail wrongly.)
     */
    @Test
    void aSecondCloseWaitsUntilTheFirstIsDone() throws Exception {
        Path path = dir.resolve("big");
        StorageFile file = StorageFile.open(path, CacheMode.WRITETHROUGH, READ, WRITE, CREATE_NEW);
        Path real = path.toRealPath(); // as /proc/self/fd names it
        ByteBuffer big = ByteBuffer.allocateDirect(256 << 20);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> run(failure, () -> file.write(big, 0)), "writer");
        Thread firstCloser = new Thread(() -> run(failure, file::close), "first closer");
        writer.start();
        Thread.sleep(20);
        firstCloser.start();
        while (file.isOpen()) Thread.sleep(1);
        file.close();
        assertFalse(openDescriptors().contains(real), "close returned while another close had the file still open");
        writer.join();
        firstCloser.join();
        if (failure.get() != null && !(failure.get() instanceof ClosedChannelException)) throw new AssertionError(failure.get());
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void run(AtomicReference<Throwable> failure, Call call) {
        try {
            call.run();
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    /** The files this process has open, from /proc/self/fd. */
    private static List<Path> openDescriptors() throws IOException {
        List<Path> open = new ArrayList<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    open.add(Files.readSymbolicLink(fd));
                } catch (IOException e) {
                    // closed while listing (the listing's own descriptor, for one)
                }
            }
        }
        return open;
    }
}
