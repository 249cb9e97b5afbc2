package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.device.BlockDevice;
import io.pagewise.devices.FileDevice;
import io.pagewise.devices.NbdDevice;
import io.pagewise.devices.SyntheticDevices;
import io.pagewise.internal.FileKinds;
import io.pagewise.nbd.NbdUri;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/** What a SRC or DST argument of copy names, checked while parsing so that a mistake in it is a usage error. */
record Endpoint(Endpoint.Kind kind, String text, long size) {
    /** The kinds of SRC and DST. */
    enum Kind { FILE, NBD, PATTERN, ZERO, DISCARD, STREAM }

    static Endpoint parse(String text, boolean source) throws UsageException {
        return parse(text, source, source ? "SRC" : "DST");
    }

    /** As {@link #parse(String, boolean)}, naming the argument role (SRC, DST, IMAGE) in the messages. */
    static Endpoint parse(String text, boolean source, String role) throws UsageException {
        if (text.equals("-")) return new Endpoint(Kind.STREAM, source ? "- (standard input)" : "- (standard output)", 0);
        if (text.equals("null:")) {
            if (source) throw new UsageException("null: can only be a destination (DST), not SRC");
            return new Endpoint(Kind.DISCARD, text, 0);
        }
        for (Kind synthetic : new Kind[] {Kind.PATTERN, Kind.ZERO}) {
            String prefix = synthetic.name().toLowerCase(Locale.ROOT) + ":";
            if (!text.startsWith(prefix)) continue;
            if (!source) throw new UsageException(prefix + "SIZE can only be a source (SRC), not DST");
            try {
                return new Endpoint(synthetic, text, Arguments.size(prefix, text.substring(prefix.length())));
            } catch (UsageException e) {
                throw new UsageException(role + " " + text + ": expected " + prefix + "SIZE, a size such as 64K, 512M or 1G");
            }
        }
        if (NbdUri.looksLikeUri(text)) {
            try {
                NbdUri.parse(text);
            } catch (IllegalArgumentException e) {
                throw new UsageException(role + ": " + e.getMessage());
            }
            return new Endpoint(Kind.NBD, text, 0);
        }
        if (!source && FileKinds.isCharacterDevice(Path.of(text))) {
            throw new UsageException(role + " " + text + " is a character device, which has no size to copy into: give null:"
                    + " to discard what is read, or - for standard output");
        }
        if (FileKinds.isPipe(Path.of(text))) {
            throw new UsageException(role + " " + text + " is a pipe, which cannot be read or written at offsets: "
                    + (role.equals("IMAGE") ? "give a file, a block device or an NBD URI"
                    : "give - as " + role + (source ? " and send the data on standard input" : " to write to standard output")));
        }
        return new Endpoint(Kind.FILE, text, 0);
    }

    /** Whether both name one file (also through links) or one NBD URI: a copy onto itself, which cp refuses too. */
    boolean sameAs(Endpoint other) {
        if (kind != other.kind) return false;
        if (kind == Kind.NBD) return text.equals(other.text);
        if (kind != Kind.FILE) return false;
        try {
            return Files.isSameFile(Path.of(text), Path.of(other.text));
        } catch (IOException | RuntimeException e) {
            return false; // DST does not exist yet, or opening says what is wrong
        }
    }

    /**
     * Opens a source for reading: a file in fileMode, an NBD export over up to connections connections, with the meta
     * context {@code qemu:dirty-bitmap:bitmap} selected when bitmap is not null.
     */
    BlockDevice openSource(CacheMode fileMode, int connections, String bitmap) throws IOException {
        switch (kind) {
            case PATTERN: return SyntheticDevices.pattern(size);
            case ZERO: return SyntheticDevices.zero(size);
            case NBD: return bitmap == null ? NbdDevice.connect(text, connections)
                    : NbdDevice.connect(text, connections, bitmap);
            case FILE: return FileDevice.open(Path.of(text), fileMode, StandardOpenOption.READ);
            default: throw new IllegalStateException(kind + " is not a source");
        }
    }

    boolean isStream() {
        return kind == Kind.STREAM;
    }
}
