package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.copy.BlockHash;
import io.pagewise.copy.Checksums;
import io.pagewise.device.BlockDevice;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code pagewise checksum}: the blkhash checksum of files, block devices and NBD exports with {@link Checksums}, printed
 * as blksum prints it.
 */
public final class ChecksumCommand {
    private static final String DESCRIPTION = String.join("\n",
            "Prints the blkhash checksum of each IMAGE (the construction of blksum and nbdcopy --blkhash): a digest per",
            "block, holes hashed without being read. IMAGE: FILE or block device, nbd://HOST[:PORT]/EXPORT,",
            "nbd+unix:///EXPORT?socket=PATH, nbds:// with TLS as for copy, pattern:SIZE, zero:SIZE. An IMAGE that starts",
            "with SCHEME: is a URI (a file whose name has a colon: ./NAME); a FILE that starts with a qcow2, VMDK, VHDX",
            "or LUKS signature is refused (see --force-raw).");

    /** Every option of checksum, once: the usage, the parsing and (checked by a test) docs/BACKUP.md come from it. */
    static final OptionTable<Options> TABLE = new OptionTable<>("usage: pagewise checksum [OPTIONS] IMAGE...",
            DESCRIPTION, List.of(
            CliOption.value("-d, --digest", "DIGEST", "sha256 (default), sha1, sha224, sha384, sha512, sha3-256, md5"
                    + " ... (blksum's names)", (o, name, value) -> o.digest = Arguments.blockHash(name, value).algorithm()),
            CliOption.value("--block-size", "SIZE", "bytes per hashed block (default 64K, as blksum; K, M suffixes)",
                    (o, name, value) -> o.blockSize = blockSize(name, value)),
            CliOption.value("-t, --threads", "N", "reads and hashes at once (default 4, as blksum)",
                    (o, name, value) -> o.threads = Arguments.integer(name, value, 1, 256)),
            CliOption.value("--cache", "MODE", "cache mode for a file (default direct, as blksum reads: nothing cached,"
                    + " no copy through the page cache)",
                    (o, name, value) -> o.cache = Arguments.cacheMode(name, value)),
            CliOption.value("-C, --connections", "N", "NBD connections per export when the server allows multi-conn"
                    + " (default 4)", (o, name, value) -> o.connections = Arguments.integer(name, value, 1, 64)),
            CliOption.flag("--force-raw", "hash a FILE that starts with a qcow2, VMDK, VHDX or LUKS signature as raw"
                    + " bytes, instead of refusing it", (o, name, value) -> o.forceRaw = true)),
            ChecksumCommand::operand, " (use -- before an IMAGE that starts with -)");

    static final String USAGE = TABLE.usage();

    private ChecksumCommand() {}

    static final class Options {
        String digest = "sha256";
        int blockSize = BlockHash.DEFAULT_BLOCK_SIZE;
        int threads = 4;
        /** O_DIRECT, as blksum reads files: the fastest way to read an image once, and it leaves nothing cached. */
        CacheMode cache = CacheMode.DIRECT.isAvailable() ? CacheMode.DIRECT : CacheMode.WRITEBACK;
        int connections = 4;
        /** --force-raw: a FILE that starts with a container's signature is hashed as its bytes, not refused. */
        boolean forceRaw;
        final List<Endpoint> images = new ArrayList<>();
    }

    /**
     * Runs {@code checksum} with the arguments after the command name; returns the exit status: 0, 1 when an image
     * could not be read (the others are still printed), 2 for a usage mistake.
     *
     * @param args the arguments
     * @param out  the checksums, and the help
     * @param err  messages
     * @return the exit status
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        Options options = new Options();
        BlockHash hash;
        try {
            if (!TABLE.parse(args, options)) {
                out.println(USAGE);
                return 0;
            }
            if (options.images.isEmpty()) throw new UsageException("no IMAGE given");
            hash = Arguments.blockHash("--digest", options.digest, options.blockSize);
            if (!options.forceRaw) refuseContainers(options);
        } catch (UsageException e) {
            err.println("pagewise checksum: " + e.getMessage());
            err.println(TABLE.synopsis() + "   (pagewise checksum --help for the options)");
            return 2;
        }
        int status = 0;
        for (Endpoint image : options.images) {
            try (BlockDevice device = image.openSource(options.cache, options.connections, null)) {
                out.println(BlockHash.hex(Checksums.of(device, hash, options.threads)) + "  " + image.text());
            } catch (IOException | RuntimeException e) {
                // Each failure's line starts with its IMAGE, as each checksum's line ends with it.
                err.println("pagewise checksum: " + image.text() + ": " + Main.message(e));
                status = 1;
            }
        }
        return status;
    }

    /**
     * Refuses the run, before any IMAGE is hashed, when a FILE starts with a container's signature: its checksum
     * would be the container's, not the disk's. An IMAGE that cannot be opened or read is left to the run, which
     * says so on its line.
     */
    private static void refuseContainers(Options options) throws UsageException {
        for (Endpoint image : options.images) {
            if (image.kind() != Endpoint.Kind.FILE) continue;
            try (BlockDevice device = image.openSource(options.cache, options.connections, null)) {
                image.refuseContainer(device, "IMAGE", true);
            } catch (IOException | RuntimeException e) {
                // hashing it fails the same way, and names the IMAGE
            }
        }
    }

    private static void operand(Options o, String arg, boolean afterEnd) throws UsageException {
        Endpoint image = Endpoint.parse(arg, true, "IMAGE");
        if (image.isStream()) throw new UsageException("IMAGE - (standard input) is not supported: give a file or URI");
        o.images.add(image);
    }

    private static int blockSize(String name, String value) throws UsageException {
        long size = Arguments.size(name, value);
        if (size < 512 || size > (64 << 20) || size % 512 != 0) {
            throw new UsageException(Arguments.shown(name, value) + ": expected a multiple of 512 from 512 to 64M");
        }
        return (int) size;
    }
}
