package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.ImageFormat;
import io.pagewise.backends.NbdDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.device.BlockDevice;
import io.pagewise.internal.FileKinds;
import io.pagewise.nbd.NbdUri;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        // A word that starts with a scheme is a URI, before anything makes it a Path (which turns // into /).
        String name = scheme(text);
        if (name == null) return file(text, source, role);
        if (name.equals("null")) {
            if (!text.equals("null:")) throw new UsageException(role + " " + text + ": null: takes nothing after the colon");
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
        if (NbdUri.SCHEMES.contains(name)) {
            try {
                NbdUri.parse(text);
            } catch (IllegalArgumentException e) {
                throw new UsageException(role + ": " + e.getMessage());
            }
            return new Endpoint(Kind.NBD, text, 0);
        }
        throw unknownScheme(role, text, name, KNOWN_SCHEMES, "null", "pattern", "zero");
    }

    /** {@return the scheme a word starts with, so that it is a URI and never a file, or null when it has none} */
    static String scheme(String text) {
        Matcher scheme = SCHEME.matcher(text);
        return scheme.lookingAt() ? scheme.group(1) : null;
    }

    /**
     * The refusal of a URI whose scheme the command does not take: it names the ones it does, says when only the case
     * was wrong, and, for a word without //, how to name a file whose name has a colon (a time, say).
     *
     * @param otherSchemes schemes the command takes besides NBD's
     */
    static UsageException unknownScheme(String role, String text, String name, String known, String... otherSchemes) {
        if (name.equals("nbd+vsock") || name.equals("nbds+vsock")) {
            return new UsageException(role + " " + text + ": NBD over vsock is not supported (the JDK has no AF_VSOCK"
                    + " sockets): give an nbd:// or nbd+unix:// URI");
        }
        String lowerCase = name.toLowerCase(Locale.ROOT);
        boolean wrongCase = NbdUri.SCHEMES.contains(lowerCase) || java.util.List.of(otherSchemes).contains(lowerCase);
        return new UsageException(role + " " + text + ": unknown URI scheme '" + name + "'"
                + (wrongCase ? " (schemes are lower case: " + lowerCase + (lowerCase.startsWith("nbd") ? "://" : ":") + ")" : "")
                + "; pagewise knows " + known
                + (text.startsWith(name + "://") ? "" : "; a file whose name has a colon is given as ./" + text));
    }

    /**
     * A scheme as RFC 3986 has it: a letter, then letters, digits, +, - and . up to a colon. Anything that starts
     * with one is a URI, as in nbdcopy (which takes nbd: and its variants, with or without //, as NBD URIs); a file
     * whose name has a colon is given as ./NAME or /PATH, which starts with no scheme.
     */
    private static final Pattern SCHEME = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*):");

    /** The URIs SRC, DST and IMAGE take, for the message that refuses another. */
    private static final String KNOWN_SCHEMES = "nbd://, nbds://, nbd+unix://, nbds+unix://, pattern:SIZE, zero:SIZE"
            + " (sources) and null: (a destination)";

    /** A FILE operand: a file or block device, and not a character device as DST or a pipe. */
    private static Endpoint file(String text, boolean source, String role) throws UsageException {
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
     * Refuses this FILE, opened as device, when it starts with the signature of a container (qcow2, VMDK, VHDX, LUKS),
     * as serve refuses one: read raw, it gives the container's bytes, not the disk inside it; written raw, the
     * container is overwritten. Read through the device, so the page cache is left as its cache mode leaves it.
     */
    void refuseContainer(BlockDevice device, String role, boolean source) throws IOException, UsageException {
        if (kind != Kind.FILE) return;
        Optional<ImageFormat> found = ImageFormat.detect(device);
        if (found.isEmpty()) return;
        ImageFormat format = found.get();
        throw new UsageException(role + " " + text + " starts with a " + format.name() + " signature: " + (source
                ? "read raw, it gives the " + format.name() + " container, not the disk inside it " + format.instead()
                        + "; --force-raw reads it raw anyway"
                : "written raw, the copy would overwrite the " + format.name() + " container, not the disk inside it"
                        + " (serve it with qemu-nbd -f " + format.qemuName() + " and give that NBD URI as DST);"
                        + " --force-raw writes it raw anyway"));
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
