package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.device.BlockDevice;
import io.pagewise.devices.FileDevice;
import io.pagewise.devices.NbdDevice;
import io.pagewise.devices.SyntheticDevices;
import io.pagewise.nbd.NbdUri;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/** What a SRC or DST argument of copy names, checked while parsing so that a mistake in it is a usage error. */
record Endpoint(Endpoint.Kind kind, String text, long size) {
    /** The kinds of SRC and DST. */
    enum Kind { FILE, NBD, PATTERN, ZERO, DISCARD, STREAM }

    static Endpoint parse(String text, boolean source) throws UsageException {
        String role = source ? "SRC" : "DST";
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
        return new Endpoint(Kind.FILE, text, 0);
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
