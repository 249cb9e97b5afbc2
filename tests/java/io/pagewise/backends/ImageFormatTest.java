package io.pagewise.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Container signatures at the start of a file: images qemu-img makes, hand-made headers, and raw files. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ImageFormatTest {
    @TempDir
    Path dir;

    @Test
    void imagesQemuImgMakesAreRecognized() throws Exception {
        ExternalTools.require("qemu-img");
        for (ImageFormat format : new ImageFormat[] {ImageFormat.QCOW2, ImageFormat.VMDK, ImageFormat.VHDX}) {
            Path image = dir.resolve("disk." + format.qemuName());
            ExternalTools.run(30, "qemu-img", "create", "-f", format.qemuName(), image.toString(), "16M")
                    .assertOk("qemu-img create -f " + format.qemuName());
            assertEquals(Optional.of(format), ImageFormat.detect(image), image.toString());
        }
        Path raw = dir.resolve("disk.raw");
        ExternalTools.run(30, "qemu-img", "create", "-f", "raw", raw.toString(), "16M").assertOk("qemu-img create -f raw");
        assertEquals(Optional.empty(), ImageFormat.detect(raw));
    }

    @Test
    void handMadeHeadersShortFilesAndDescriptors() throws Exception {
        Path luks = Files.write(dir.resolve("luks"), new byte[] {'L', 'U', 'K', 'S', (byte) 0xba, (byte) 0xbe, 0, 2});
        assertEquals(Optional.of(ImageFormat.LUKS), ImageFormat.detect(luks));
        Path descriptor = Files.writeString(dir.resolve("d.vmdk"), "# Disk DescriptorFile\nversion=1\n");
        assertEquals(Optional.of(ImageFormat.VMDK), ImageFormat.detect(descriptor));
        Path almost = Files.write(dir.resolve("almost"), new byte[] {'Q', 'F', 'I'}); // shorter than the signature
        assertEquals(Optional.empty(), ImageFormat.detect(almost));
        Path empty = Files.write(dir.resolve("empty"), new byte[0]);
        assertEquals(Optional.empty(), ImageFormat.detect(empty));
        Path zeros = Files.write(dir.resolve("zeros"), new byte[4096]);
        assertEquals(Optional.empty(), ImageFormat.detect(zeros));
        assertThrows(NoSuchFileException.class, () -> ImageFormat.detect(dir.resolve("missing")));
    }

    @Test
    void theWarningNamesTheFileFormatAndWayOut() {
        String warning = ImageFormat.QCOW2.warning(Path.of("/vm/vm3.qcow2"));
        assertTrue(warning.startsWith("/vm/vm3.qcow2 starts with a QCOW2 signature"), warning);
        assertTrue(warning.contains("qemu-img convert -f qcow2 -O raw"), warning);
    }

    @Test
    void aDeviceIsReadThroughItselfAndMayBeShorterThanTheHeader() throws Exception {
        MemoryDevice qcow2 = new MemoryDevice(1 << 16);
        qcow2.write(java.nio.ByteBuffer.wrap(new byte[] {'Q', 'F', 'I', (byte) 0xfb, 0, 0, 0, 3}), 0, false);
        assertEquals(Optional.of(ImageFormat.QCOW2), ImageFormat.detect(qcow2));
        MemoryDevice luks = new MemoryDevice(6);
        luks.write(java.nio.ByteBuffer.wrap(new byte[] {'L', 'U', 'K', 'S', (byte) 0xba, (byte) 0xbe}), 0, false);
        assertEquals(Optional.of(ImageFormat.LUKS), ImageFormat.detect(luks));
        assertEquals(Optional.empty(), ImageFormat.detect(new MemoryDevice(0)));
        assertEquals(Optional.empty(), ImageFormat.detect(new MemoryDevice(4096)));
    }
}
