package io.pagewise.nbd.server.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.backends.NbdDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.backup.DirtyBitmap;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.filters.DirtyBitmapFilter;
import io.pagewise.filters.Filters;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.wire.Protocol;
import io.pagewise.testing.RecordingLogger;
import java.io.Closeable;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the server tells a client about each kind of export: the transmission flags of the handshake, the metadata
 * contexts it offers, and the two capabilities no flag carries (holes to look for on a read, zeros to skip on a copy),
 * for every device and a table of filter stacks. The expected lines were recorded from the server as it was when
 * each device answered eleven separate questions, so that one capabilities value must reproduce them exactly.
 */
@Timeout(60)
class CapabilityFlagsTest {
    private static final int SIZE = 1 << 20;
    private static final Map<Integer, String> FLAG_NAMES = new LinkedHashMap<>();

    static {
        FLAG_NAMES.put(Protocol.TF_READ_ONLY, "READ_ONLY");
        FLAG_NAMES.put(Protocol.TF_SEND_FLUSH, "FLUSH");
        FLAG_NAMES.put(Protocol.TF_SEND_FUA, "FUA");
        FLAG_NAMES.put(Protocol.TF_SEND_TRIM, "TRIM");
        FLAG_NAMES.put(Protocol.TF_SEND_WRITE_ZEROES, "WRITE_ZEROES");
        FLAG_NAMES.put(Protocol.TF_SEND_FAST_ZERO, "FAST_ZERO");
        FLAG_NAMES.put(Protocol.TF_SEND_DF, "DF");
        FLAG_NAMES.put(Protocol.TF_CAN_MULTI_CONN, "MULTI_CONN");
        FLAG_NAMES.put(Protocol.TF_SEND_CACHE, "CACHE");
    }

    /** Recorded from the server before devices stated one capabilities value; each line is one export. */
    private static final String EXPECTED = """
            file rw sparse -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            file rw full -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=false zeroed=false
            file rw direct -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [base:allocation] | holes=true zeroed=false
            file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            file created -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=true
            memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            pattern -> READ_ONLY DF MULTI_CONN | [] | holes=false zeroed=false
            zero -> READ_ONLY DF MULTI_CONN | [base:allocation] | holes=true zeroed=true
            discard -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=true
            readonly / file rw -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            readonly / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            readonly / memory -> READ_ONLY DF MULTI_CONN | [] | holes=false zeroed=false
            noextents / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [] | holes=false zeroed=false
            noextents / file ro -> READ_ONLY DF MULTI_CONN CACHE | [] | holes=false zeroed=false
            noextents / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            nozero / file rw -> FLUSH FUA TRIM DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            nozero / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            nozero / memory -> FLUSH FUA TRIM DF MULTI_CONN | [] | holes=false zeroed=false
            nozero:mode=emulate / file rw -> FLUSH FUA TRIM WRITE_ZEROES DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            nozero:mode=emulate / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            nozero:mode=emulate / memory -> FLUSH FUA TRIM WRITE_ZEROES DF MULTI_CONN | [] | holes=false zeroed=false
            cow / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            cow / file ro -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            cow / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [base:allocation] | holes=true zeroed=false
            blocksize / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            blocksize / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            blocksize / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            stats / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            stats / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            stats / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            rate:rate=1G / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            rate:rate=1G / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            rate:rate=1G / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            delay:read=1ms / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            delay:read=1ms / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            delay:read=1ms / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            error:rate=0 / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            error:rate=0 / file ro -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            error:rate=0 / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            cow / file created -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=true
            cow / zero -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [base:allocation] | holes=true zeroed=true
            readonly, cow / file rw -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            cow, readonly / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            nozero:mode=emulate, readonly / file rw -> READ_ONLY DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            noextents, cow / file ro -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [] | holes=false zeroed=false
            cow, noextents / file ro -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation] | holes=true zeroed=false
            stats, nozero, blocksize:minblock=4096 / file direct -> FLUSH FUA TRIM DF MULTI_CONN | [base:allocation] | holes=true zeroed=false
            dirty bitmap / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN CACHE | [base:allocation, qemu:dirty-bitmap:b] | holes=true zeroed=false
            nbd / file rw -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [base:allocation] | holes=true zeroed=false
            nbd / file ro -> READ_ONLY DF MULTI_CONN | [base:allocation] | holes=true zeroed=false
            nbd / memory -> FLUSH FUA TRIM WRITE_ZEROES FAST_ZERO DF MULTI_CONN | [] | holes=false zeroed=false
            nbd / nozero:mode=emulate / file rw -> FLUSH FUA TRIM WRITE_ZEROES DF MULTI_CONN | [base:allocation] | holes=true zeroed=false
            nbd / noextents / pattern -> READ_ONLY DF MULTI_CONN | [] | holes=false zeroed=false
            """;

    @TempDir
    Path dir;

    private final Deque<Closeable> opened = new ArrayDeque<>();
    private int files;

    @AfterEach
    void closeAll() throws IOException {
        while (!opened.isEmpty()) opened.pop().close();
    }

    private <T extends Closeable> T opened(T resource) {
        opened.push(resource);
        return resource;
    }

    /** A file of SIZE bytes: sparse (one hole) or written throughout. */
    private Path image(boolean sparse) throws IOException {
        Path file = dir.resolve("image" + files++ + ".img");
        if (sparse) {
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                raf.setLength(SIZE);
                raf.write(new byte[4096]);
            }
        } else {
            Files.write(file, new byte[(int) SIZE]);
        }
        return file;
    }

    private FileDevice readWrite(boolean sparse, CacheMode mode) throws IOException {
        return opened(FileDevice.open(image(sparse), mode, StandardOpenOption.READ, StandardOpenOption.WRITE));
    }

    private FileDevice readOnly() throws IOException {
        return opened(FileDevice.open(image(true), CacheMode.WRITEBACK, StandardOpenOption.READ));
    }

    private FileDevice created() throws IOException {
        return opened(FileDevice.create(dir.resolve("created" + files++ + ".img"), CacheMode.WRITEBACK, SIZE));
    }

    private BlockDevice filtered(BlockDevice device, String... specs) throws IOException {
        BlockDevice top = Filters.apply(device, List.of(specs));
        if (top != device) opened(top);
        return top;
    }

    /** A device reached over NBD from a server that serves export. */
    private BlockDevice proxy(BlockDevice export) throws IOException {
        Path socket = dir.resolve("s" + files++ + ".sock");
        NbdServer server = opened(NbdServer.builder().export("", export).unixSocket(socket)
                .logger(new RecordingLogger(null, System.Logger.Level.ERROR)).start());
        return opened(NbdDevice.connect(server.uri(), 1));
    }

    private BlockDevice dirtyBitmap(BlockDevice device) throws IOException {
        DirtyBitmap bitmap = DirtyBitmap.open(dir.resolve("bitmap" + files++), "b", null, device.size(), 65536);
        return opened(new DirtyBitmapFilter(device, bitmap));
    }

    private static String describe(BlockDevice device) {
        StringJoiner flags = new StringJoiner(" ");
        int bits = Handshake.transmissionFlags(device, true);
        FLAG_NAMES.forEach((bit, name) -> {
            if ((bits & bit) != 0) flags.add(name);
        });
        List<String> contexts = new ArrayList<>();
        for (MetaContext context : MetaContext.offeredBy(device, false)) contexts.add(context.name());
        Capabilities can = device.capabilities();
        return flags + " | " + contexts + " | holes=" + can.has(Capability.HOLES)
                + " zeroed=" + can.has(Capability.STARTS_ZEROED);
    }

    @Test
    void everyDeviceAndFilterStackAdvertisesWhatItCanDo() throws Exception {
        Map<String, String> actual = new LinkedHashMap<>();
        actual.put("file rw sparse", describe(readWrite(true, CacheMode.WRITEBACK)));
        actual.put("file rw full", describe(readWrite(false, CacheMode.WRITEBACK)));
        actual.put("file rw direct", describe(readWrite(true, CacheMode.DIRECT)));
        actual.put("file ro", describe(readOnly()));
        actual.put("file created", describe(created()));
        actual.put("memory", describe(opened(new MemoryDevice(SIZE))));
        actual.put("pattern", describe(SyntheticDevices.pattern(SIZE)));
        actual.put("zero", describe(SyntheticDevices.zero(SIZE)));
        actual.put("discard", describe(SyntheticDevices.discard(SIZE)));
        for (String filter : List.of("readonly", "noextents", "nozero", "nozero:mode=emulate", "cow", "blocksize",
                "stats", "rate:rate=1G", "delay:read=1ms", "error:rate=0")) {
            actual.put(filter + " / file rw", describe(filtered(readWrite(true, CacheMode.WRITEBACK), filter)));
            actual.put(filter + " / file ro", describe(filtered(readOnly(), filter)));
            actual.put(filter + " / memory", describe(filtered(opened(new MemoryDevice(SIZE)), filter)));
        }
        actual.put("cow / file created", describe(filtered(created(), "cow")));
        actual.put("cow / zero", describe(filtered(SyntheticDevices.zero(SIZE), "cow")));
        actual.put("readonly, cow / file rw", describe(filtered(readWrite(true, CacheMode.WRITEBACK), "readonly", "cow")));
        actual.put("cow, readonly / file rw", describe(filtered(readWrite(true, CacheMode.WRITEBACK), "cow", "readonly")));
        actual.put("nozero:mode=emulate, readonly / file rw",
                describe(filtered(readWrite(true, CacheMode.WRITEBACK), "nozero:mode=emulate", "readonly")));
        actual.put("noextents, cow / file ro", describe(filtered(readOnly(), "noextents", "cow")));
        actual.put("cow, noextents / file ro", describe(filtered(readOnly(), "cow", "noextents")));
        actual.put("stats, nozero, blocksize:minblock=4096 / file direct",
                describe(filtered(readWrite(true, CacheMode.DIRECT), "stats", "nozero", "blocksize:minblock=4096,maxlen=1G")));
        actual.put("dirty bitmap / file rw", describe(dirtyBitmap(readWrite(true, CacheMode.WRITEBACK))));
        actual.put("nbd / file rw", describe(proxy(readWrite(true, CacheMode.WRITEBACK))));
        actual.put("nbd / file ro", describe(proxy(readOnly())));
        actual.put("nbd / memory", describe(proxy(opened(new MemoryDevice(SIZE)))));
        actual.put("nbd / nozero:mode=emulate / file rw",
                describe(proxy(filtered(readWrite(true, CacheMode.WRITEBACK), "nozero:mode=emulate"))));
        actual.put("nbd / noextents / pattern", describe(proxy(filtered(SyntheticDevices.pattern(SIZE), "noextents"))));

        StringBuilder table = new StringBuilder();
        actual.forEach((row, line) -> table.append(row).append(" -> ").append(line).append('\n'));
        assertEquals(EXPECTED, table.toString());
    }
}
