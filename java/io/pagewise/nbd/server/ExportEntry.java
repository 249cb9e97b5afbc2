package io.pagewise.nbd.server;

import io.pagewise.device.BlockDevice;
import java.nio.file.Path;
import java.util.Objects;

/**
 * An export as the server serves it: its name, a line for humans that {@code NBD_OPT_LIST} and {@code NBD_OPT_INFO}
 * show, the device that serves it, and the file behind the device when there is one, whose page-cache state the
 * server's metrics report.
 *
 * @param name        the name clients ask for, at most 4096 bytes of UTF-8
 * @param description a line for humans, "" for none
 * @param device      the device that serves it
 * @param file        the file or block device behind the device, or null when there is none (memory, NBD)
 */
public record ExportEntry(String name, String description, BlockDevice device, Path file) {
    /**
     * Checks the parts.
     *
     * @param name        the name clients ask for
     * @param description a line for humans, "" for none
     * @param device      the device that serves it
     * @param file        the file behind the device, or null
     */
    public ExportEntry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(device, "device");
        description = description == null ? "" : description;
        if (utf8Length(name) > 4096) throw new IllegalArgumentException("export name over 4096 bytes: " + shortened(name));
        if (utf8Length(description) > 4096) {
            throw new IllegalArgumentException("description of export '" + shortened(name) + "' over 4096 bytes");
        }
    }

    /**
     * An export without a file behind it.
     *
     * @param name        the name clients ask for
     * @param description a line for humans, "" for none
     * @param device      the device that serves it
     */
    public ExportEntry(String name, String description, BlockDevice device) {
        this(name, description, device, null);
    }

    private static int utf8Length(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }

    private static String shortened(String name) {
        return name.length() > 40 ? name.substring(0, 40) + "..." : name;
    }
}
