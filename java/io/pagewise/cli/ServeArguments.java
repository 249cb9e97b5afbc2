package io.pagewise.cli;

import io.pagewise.AccessHint;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.NbdServer;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Parsers of serve's option values; mistakes are {@link UsageException}s naming the option and the value. */
final class ServeArguments {
    private ServeArguments() {}

    /**
     * A --bitmap: its name, its file (null for the default, FILE.NAME.bitmap beside the image) and granularity.
     *
     * @param name        the bitmap's name, as in qemu:dirty-bitmap:NAME
     * @param file        the bitmap file, or null for the default
     * @param granularity bytes per bit
     */
    record BitmapSpec(String name, Path file, long granularity) {
        /** {@return the bitmap file: the one given, else IMAGE.NAME.bitmap beside the image} */
        Path fileFor(Path image) {
            return file != null ? file : image.resolveSibling(image.getFileName() + "." + name + ".bitmap");
        }
    }

    /** Parses NAME[:file=PATH,granularity=SIZE]. */
    static BitmapSpec bitmap(String option, String value) throws UsageException {
        int colon = value.indexOf(':');
        String name = colon < 0 ? value : value.substring(0, colon);
        if (name.isEmpty()) throw new UsageException(Arguments.shown(option, value) + ": the bitmap needs a NAME");
        if (name.getBytes(StandardCharsets.UTF_8).length > 1024) {
            throw new UsageException(Arguments.shown(option, value) + ": the bitmap name is over 1024 bytes");
        }
        Path file = null;
        long granularity = io.pagewise.backup.DirtyBitmap.DEFAULT_GRANULARITY;
        if (colon >= 0) {
            for (String parameter : value.substring(colon + 1).split(",", -1)) {
                int equals = parameter.indexOf('=');
                String key = equals < 0 ? parameter : parameter.substring(0, equals);
                String given = equals < 0 ? "" : parameter.substring(equals + 1);
                if (key.equals("file") && !given.isEmpty()) {
                    file = Path.of(given);
                } else if (key.equals("granularity") && !given.isEmpty()) {
                    granularity = Arguments.size(option + " granularity", given);
                    if (granularity < 512 || granularity > (1L << 30) || Long.bitCount(granularity) != 1) {
                        throw new UsageException(Arguments.shown(option, value) + ": granularity " + given
                                + " is not a power of two from 512 to 1G");
                    }
                } else {
                    throw new UsageException(Arguments.shown(option, value) + ": '" + parameter
                            + "' is not file=PATH or granularity=SIZE");
                }
            }
        }
        return new BitmapSpec(name, file, granularity);
    }

    static boolean logDestination(String name, String value) throws UsageException {
        switch (value) {
            case "stderr": return false;
            case "journal": return true;
            case "syslog": throw new UsageException(Arguments.shown(name, value) + ": not offered (pagewise does not"
                    + " write to syslog(3) or /dev/log); under systemd use " + Arguments.shown(name, "journal")
                    + ", which journald reads from stderr with each line's severity");
            default: throw new UsageException(Arguments.shown(name, value) + ": expected stderr or journal");
        }
    }

    static java.net.InetSocketAddress metrics(String name, String value) throws UsageException {
        try {
            return MetricsEndpoint.parseAddress(value);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage().replace("--metrics=", name + "="));
        }
    }

    /** Comma-separated values, none empty. */
    static List<String> list(String name, String value) throws UsageException {
        List<String> values = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            if (part.trim().isEmpty()) throw new UsageException(Arguments.shown(name, value) + ": an empty entry in the list");
            values.add(part.trim());
        }
        return values;
    }

    static List<String> allowed(String name, String value) throws UsageException {
        return checkedList(name, value, cidr -> NbdServer.builder().allow(cidr));
    }

    static List<String> allowedUsers(String name, String value) throws UsageException {
        return checkedList(name, value, user -> NbdServer.builder().allowUsers(user));
    }

    /** A list whose entries the server's builder checks, its IllegalArgumentException a usage mistake. */
    private static List<String> checkedList(String name, String value, java.util.function.Consumer<String> check)
            throws UsageException {
        List<String> entries = list(name, value);
        for (String entry : entries) {
            try {
                check.accept(entry);
            } catch (IllegalArgumentException e) {
                throw new UsageException(Arguments.shown(name, value) + ": " + e.getMessage());
            }
        }
        return entries;
    }

    static AccessHint hint(String name, String value) throws UsageException {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "normal": return AccessHint.NORMAL;
            case "sequential": return AccessHint.SEQUENTIAL;
            case "random": return AccessHint.RANDOM;
            default: throw new UsageException(Arguments.shown(name, value) + ": expected normal, sequential or random");
        }
    }

    static TlsMode tlsMode(String name, String value) throws UsageException {
        switch (value) {
            case "off": return TlsMode.OFF;
            case "on": return TlsMode.ON;
            case "require": return TlsMode.REQUIRE;
            default: throw new UsageException(Arguments.shown(name, value) + ": expected off, on or require");
        }
    }

    /** A --description; -D with what looks like nbdkit's debug flag (-D file.zero=1) is that mix-up. */
    static String description(String name, String value) throws UsageException {
        if (name.equals("-D") && value.matches("[\\w-]+\\.[\\w.-]+=\\S*")) {
            throw new UsageException("-D " + value + ": -D is qemu-nbd's --description here, and this looks like nbdkit's"
                    + " debug flag, which pagewise does not have: for a description give --description='" + value
                    + "'; for more logging, -v");
        }
        return nbdString(name, value);
    }

    /** A --pidfile; -P with a number is qemu-nbd's old --partition, which pagewise does not have. */
    static Path pidFile(String name, String value) throws UsageException {
        if (name.equals("-P") && value.matches("[0-9]+")) {
            throw new UsageException("-P " + value + ": -P is nbdkit's --pidfile here; qemu-nbd's old -P PARTITION is not"
                    + " offered: serve the partition's own device (/dev/sdX" + value + "); for a pid file named "
                    + value + " give --pidfile=./" + value);
        }
        return Path.of(nonEmpty(name, value));
    }

    /** qemu-nbd's --shared=N: clients at once, 0 for no limit; nbdkit's -e is the export name. */
    static int shared(String name, String value) throws UsageException {
        if (!value.matches("[0-9]+")) {
            throw new UsageException(Arguments.shown(name, value) + ": expected a number of clients (qemu-nbd's"
                    + " --shared); for nbdkit's -e EXPORTNAME give --export-name=" + value);
        }
        int clients = Arguments.integer(name, value, 0, 65536);
        return clients == 0 ? 65536 : clients;
    }

    /** qemu-nbd's --format: raw serves the bytes as they are, as --force-raw; pagewise reads no other format. */
    static boolean rawFormat(String name, String value) throws UsageException {
        String format = value.toLowerCase(Locale.ROOT);
        if (format.equals("raw")) return true;
        if (format.matches("qcow2?|qed|vmdk|vhdx|vpc|vdi|luks|parallels|bochs|cloop|dmg|vvfat|host_device|file")) {
            throw new UsageException(Arguments.shown(name, value) + ": pagewise serves raw images only: convert with"
                    + " qemu-img convert -f " + value + " -O raw, or serve it with qemu-nbd");
        }
        throw new UsageException(Arguments.shown(name, value) + ": expected raw (" + name + " is qemu-nbd's --format;"
                + " nbdkit's -f, --foreground, is how serve always runs)");
    }

    /** qemu-nbd's --aio: serve does its I/O on threads. */
    static void aio(String name, String value) throws UsageException {
        if (value.equals("threads")) return;
        throw new UsageException(Arguments.shown(name, value) + ": not offered: serve reads and writes with"
                + " preadv/pwritev on its --threads=N (qemu-nbd's --aio=threads)");
    }

    /** qemu-nbd's --discard: serve carries out every trim. */
    static void discard(String name, String value) throws UsageException {
        if (value.equals("unmap")) return;
        if (value.equals("ignore") || value.equals("off")) {
            throw new UsageException(Arguments.shown(name, value) + ": not offered: serve carries out every trim"
                    + " (punches a hole, qemu-nbd's --discard=unmap); --read-only refuses trims with writes");
        }
        throw new UsageException(Arguments.shown(name, value) + ": expected unmap");
    }

    static String nonEmpty(String name, String value) throws UsageException {
        if (value.isEmpty()) throw new UsageException(name + " needs a value");
        return value;
    }

    static InetAddress address(String name, String value) throws UsageException {
        try {
            return InetAddress.getByName(value);
        } catch (UnknownHostException e) {
            throw new UsageException(name + "=" + value + ": unknown host or address");
        }
    }

    /** NBD strings (export names, descriptions) are at most 4096 bytes of UTF-8. */
    static String nbdString(String name, String value) throws UsageException {
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > 4096) throw new UsageException(name + " is " + bytes + " bytes long; NBD allows at most 4096");
        return decoded(name, value);
    }

    /** {@return value, an argument}: refused when it holds bytes that the locale's character set could not decode */
    static String decoded(String name, String value) throws UsageException {
        if (value.indexOf('\uFFFD') >= 0) { // what the JVM makes of such bytes
            String advice = Main.utf8LocaleAdvice();
            throw new UsageException(name + " has characters that " + Main.localeCharset() + " cannot decode"
                    + (advice == null ? "" : "; " + advice));
        }
        return value;
    }
}
