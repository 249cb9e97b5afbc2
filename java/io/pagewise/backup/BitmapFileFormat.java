package io.pagewise.backup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The layout of a {@link DirtyBitmap}'s file: a 4 KiB header (magic, version, flags, granularity, image size,
 * generation, the image's modification time, the name, a CRC32C), the bits, and a 16-byte trailer (a time and its
 * complement). Reads and checks what an existing file says, and makes the header and trailer to write.
 */
final class BitmapFileFormat {
    static final int HEADER = 4096;
    static final int TRAILER = 16;
    /** Flag: the bitmap is open, and a file found so was not closed cleanly. */
    static final int IN_USE = 1;
    /** Flag: the bits cannot be trusted. */
    static final int INVALID = 2;
    private static final long MAGIC = 0x50414d5449425750L; // "PWBITMAP", little-endian
    private static final int VERSION = 1;
    /** What to do about a bitmap file that cannot be used. */
    static final String START_AFRESH = "delete the file to start a new bitmap (the next copy from it must then"
            + " be a full one)";

    private BitmapFileFormat() {}

    /** What a file's header says; modified is the image's modification time in nanoseconds. */
    record Header(int flags, long granularity, long imageSize, long generation, long modified, String name) {}

    /** Reads the header of an existing bitmap file, refusing one cut short, damaged or of an unknown version. */
    static Header read(FileChannel channel, Path file) throws IOException {
        long length = channel.size();
        if (length < HEADER) {
            throw new IOException(file + " is " + length + " bytes long, shorter than a bitmap's " + HEADER
                    + "-byte header: cut short, or not a bitmap; " + START_AFRESH);
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
        readFully(channel, header, 0);
        header.flip();
        CRC32C crc = new CRC32C();
        crc.update(header.array(), 0, HEADER - 4);
        if (header.getLong(0) != MAGIC || (int) crc.getValue() != header.getInt(HEADER - 4)) {
            throw new IOException(file + ": not a pagewise dirty bitmap, or its header is damaged; " + START_AFRESH);
        }
        if (header.getInt(8) != VERSION) {
            throw new IOException(file + ": bitmap version " + header.getInt(8) + " is unknown; " + START_AFRESH);
        }
        int nameLength = header.getInt(48);
        return new Header(header.getInt(12), header.getLong(16), header.getLong(24), header.getLong(32),
                header.getLong(40), new String(header.array(), 52, Math.min(nameLength, 1024), StandardCharsets.UTF_8));
    }

    /** {@return the header that says what is given, with its checksum} */
    static ByteBuffer header(Header says) {
        ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
        header.putLong(0, MAGIC).putInt(8, VERSION).putInt(12, says.flags()).putLong(16, says.granularity())
                .putLong(24, says.imageSize()).putLong(32, says.generation()).putLong(40, says.modified());
        byte[] nameBytes = says.name().getBytes(StandardCharsets.UTF_8);
        header.putInt(48, nameBytes.length).put(52, nameBytes);
        CRC32C crc = new CRC32C();
        crc.update(header.array(), 0, HEADER - 4);
        header.putInt(HEADER - 4, (int) crc.getValue());
        return header;
    }

    /** {@return where the trailer starts: after the header and the bits of chunks} */
    static long trailerAt(long chunks) {
        return HEADER + (chunks + 7) / 8;
    }

    static ByteBuffer trailer(long time) {
        return ByteBuffer.allocate(TRAILER).order(ByteOrder.LITTLE_ENDIAN).putLong(0, time).putLong(8, ~time);
    }

    /** The trailer's time, or Long.MIN_VALUE when the file has none (an older file) or it does not check out. */
    static long changesEndedBefore(FileChannel channel, long chunks) throws IOException {
        long at = trailerAt(chunks);
        if (channel.size() < at + TRAILER) return Long.MIN_VALUE;
        ByteBuffer trailer = ByteBuffer.allocate(TRAILER).order(ByteOrder.LITTLE_ENDIAN);
        readFully(channel, trailer, at);
        long time = trailer.getLong(0);
        return trailer.getLong(8) == ~time ? time : Long.MIN_VALUE;
    }

    static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, position);
            if (n < 0) throw new java.io.EOFException("bitmap file ends at " + position);
            position += n;
        }
    }
}
