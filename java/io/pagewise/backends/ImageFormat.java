package io.pagewise.backends;

import io.pagewise.device.BlockDevice;
import io.pagewise.internal.FileKinds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Disk-image containers that a raw export would serve as their container bytes, not as the disk inside: a server
 * that serves files raw, as pagewise does, should warn about or refuse a file that starts with one of these
 * signatures (qemu-img and nbdkit detect them the same way, by the first bytes).
 */
public enum ImageFormat {
    /** QEMU copy-on-write, versions 1 to 3: "QFI\xfb" at offset 0. */
    QCOW2("qcow2", new byte[] {'Q', 'F', 'I', (byte) 0xfb}),
    /** A VMware sparse extent ("KDMV" at offset 0) or a VMDK descriptor file ("# Disk DescriptorFile"). */
    VMDK("vmdk", new byte[] {'K', 'D', 'M', 'V'}),
    /** Microsoft Hyper-V VHDX: "vhdxfile" at offset 0. */
    VHDX("vhdx", "vhdxfile".getBytes(StandardCharsets.US_ASCII)),
    /** A LUKS-encrypted volume, version 1 or 2: "LUKS\xba\xbe" at offset 0. */
    LUKS("luks", new byte[] {'L', 'U', 'K', 'S', (byte) 0xba, (byte) 0xbe});

    /** How many bytes of a file {@link #detect(ByteBuffer)} looks at. */
    public static final int HEADER_BYTES = 32;

    private static final byte[] VMDK_DESCRIPTOR = "# Disk DescriptorFile".getBytes(StandardCharsets.US_ASCII);

    private final String qemuName;
    private final byte[] magic;

    ImageFormat(String qemuName, byte[] magic) {
        this.qemuName = qemuName;
        this.magic = magic;
    }

    /** {@return the name qemu-img and qemu-nbd give the format ({@code -f qcow2}): what to convert the file with} */
    public String qemuName() {
        return qemuName;
    }

    /**
     * {@return the container format a file starts with, or empty for none (the file is taken to be a raw disk)}
     *
     * @param file a file or block device
     * @throws IOException when it cannot be opened or read
     */
    public static Optional<ImageFormat> detect(Path file) throws IOException {
        FileKinds.requireFileOrDevice(file);
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            while (header.hasRemaining() && channel.read(header, header.position()) > 0) {
                // a short file ends the loop; a signature needs the bytes it has
            }
        }
        return detect(header.flip());
    }

    /**
     * {@return the container format a device starts with, or empty for none}, read through the device: a file opened
     * in a cache mode is read as that mode reads, so EVICT and DIRECT leave the page cache as they found it (a plain
     * read of the header would leave it, and the readahead behind it, cached)
     *
     * @param device a device, such as a {@link FileDevice}
     * @throws IOException when it cannot be read
     */
    public static Optional<ImageFormat> detect(BlockDevice device) throws IOException {
        ByteBuffer header = ByteBuffer.allocate((int) Math.min(device.size(),
                Math.max(HEADER_BYTES, device.minimumBlockSize())));
        device.readFully(header, 0);
        return detect(header.flip());
    }

    /**
     * {@return the container format whose signature the bytes from a file's start (its first {@value #HEADER_BYTES}
     * bytes, or fewer for a shorter file) begin with, or empty for none}; the buffer's position is not moved
     *
     * @param header the file's first bytes, between position and limit
     */
    public static Optional<ImageFormat> detect(ByteBuffer header) {
        for (ImageFormat format : values()) {
            if (startsWith(header, format.magic)) return Optional.of(format);
        }
        return startsWith(header, VMDK_DESCRIPTOR) ? Optional.of(VMDK) : Optional.empty();
    }

    /**
     * {@return a warning for an operator about a file served raw that is a container}, naming the file, the format
     * and what to do instead
     *
     * @param file the file
     */
    public String warning(Path file) {
        return file + " starts with a " + name() + " signature: served raw, clients see the " + name()
                + " container, not the disk inside it " + instead();
    }

    /**
     * {@return why a file in this format should not be served raw}, for a refusal: "starts with a QCOW2 signature:
     * clients would see the QCOW2 container, ..." and what to do instead; the caller puts the file's name before it
     */
    public String problem() {
        return "starts with a " + name() + " signature: clients would see the " + name()
                + " container, not the disk inside it " + instead();
    }

    /**
     * {@return what to do instead of reading the file raw, in parentheses}: "(convert it with qemu-img convert -f
     * qcow2 -O raw, or serve it with qemu-nbd -f qcow2)"
     */
    public String instead() {
        return "(convert it with qemu-img convert -f " + qemuName + " -O raw, or serve it with qemu-nbd -f " + qemuName + ")";
    }

    private static boolean startsWith(ByteBuffer header, byte[] magic) {
        if (header.remaining() < magic.length) return false;
        for (int i = 0; i < magic.length; i++) {
            if (header.get(header.position() + i) != magic[i]) return false;
        }
        return true;
    }
}
