package io.pagewise.filters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.FilterDevice;
import io.pagewise.filters.FaultFilter.Operation;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Filters by name: each is made with its parameters, stacked in the order given, and bad specs say what is wrong. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FiltersTest {
    @TempDir
    Path dir;

    @Test
    void theFirstFilterNamedIsOutermost() throws IOException {
        MemoryDevice memory = new MemoryDevice(1 << 20);
        BlockDevice stacked = Filters.apply(memory, List.of("stats:file=" + dir.resolve("s"), "readonly",
                "blocksize:minblock=4K,maxdata=64K", "rate:rate=100M", "error:rate=0", "delay:read=0ms"));
        List<Class<?>> order = new java.util.ArrayList<>();
        for (BlockDevice d = stacked; d instanceof FilterDevice; d = ((FilterDevice) d).wrapped()) order.add(d.getClass());
        assertEquals(List.of(StatsFilter.class, ReadOnlyFilter.class, BlockSizeFilter.class, RateFilter.class,
                FaultFilter.class, FaultFilter.class), order);
        assertSame(memory, Filters.apply(memory, List.of()));
        assertEquals(4096, stacked.minimumBlockSize());
        ((StatsFilter) stacked).close();
    }

    @Test
    void errorTakesRatesErrnosAndOperationsAsNbdkitNamesThem() throws IOException {
        BlockDevice faulty = Filters.apply(new MemoryDevice(4096),
                List.of("error:rate=100%,error=ENOSPC,ops=write,zero,seed=7"));
        DeviceException failed = assertThrows(DeviceException.class,
                () -> faulty.write(ByteBuffer.allocate(10), 0, false));
        assertEquals(DeviceException.ENOSPC, failed.errno());
        faulty.readFully(ByteBuffer.allocate(10), 0); // reads are not in ops
        assertEquals(1, ((FaultFilter) faulty).injected(Operation.WRITE));
        assertEquals(7, ((FaultFilter) faulty).seed());
    }

    @Test
    void delayWaitsPerOperation() throws IOException {
        FaultFilter slow = (FaultFilter) Filters.apply(new MemoryDevice(4096), List.of("delay:rdelay=40ms,flush=1ms-2ms"));
        long start = System.nanoTime();
        slow.readFully(ByteBuffer.allocate(10), 0);
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(39));
        slow.write(ByteBuffer.allocate(10), 0, false);
        slow.flush();
        assertEquals(1, slow.delayed(Operation.READ));
        assertEquals(0, slow.delayed(Operation.WRITE));
        assertEquals(1, slow.delayed(Operation.FLUSH));
    }

    @Test
    void cowByNameKeepsItsOverlayWhereTold() throws IOException {
        Path overlay = dir.resolve("o.cow");
        try (BlockDevice cow = Filters.apply(new MemoryDevice(1 << 20), List.of("cow:file=" + overlay + ",blocksize=8K"))) {
            assertEquals(overlay, ((CowFilter) cow).overlay());
            assertEquals(8192, ((CowFilter) cow).blockSize());
        }
    }

    @Test
    void noextentsHidesTheMapAndNozeroTakesZeroingAway() throws IOException {
        MemoryDevice memory = new MemoryDevice(1 << 20);
        BlockDevice holes = new FilterDevice(memory) {
            @Override
            public Capabilities capabilities() {
                return super.capabilities().with(Capability.EXTENTS, Capability.HOLES);
            }

            @Override
            public List<io.pagewise.Extent> extents(long offset, long length, int max) {
                return List.of(new io.pagewise.Extent(offset, length, true));
            }
        };
        BlockDevice hidden = Filters.apply(holes, List.of("noextents"));
        assertEquals(List.of(new io.pagewise.Extent(0, 4096, false)), hidden.extents(0, 4096, 10));
        assertTrue(!hidden.capabilities().has(Capability.EXTENTS) && !hidden.capabilities().has(Capability.HOLES));

        BlockDevice none = Filters.apply(memory, List.of("nozero"));
        assertTrue(!none.capabilities().has(Capability.ZERO) && !none.capabilities().has(Capability.FAST_ZERO));
        assertThrows(DeviceException.class, () -> none.zero(0, 10, io.pagewise.device.ZeroFlag.NONE));

        memory.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}), 100, false);
        int[] writes = {0};
        BlockDevice counted = new FilterDevice(memory) {
            @Override
            public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
                writes[0]++;
                super.write(src, offset, fua);
            }

            @Override
            public void zero(long offset, long length, java.util.Set<io.pagewise.device.ZeroFlag> flags) {
                throw new AssertionError("the device must not see a zero");
            }
        };
        BlockDevice emulated = Filters.apply(counted, List.of("nozero:mode=emulate"));
        assertTrue(emulated.capabilities().has(Capability.ZERO) && !emulated.capabilities().has(Capability.FAST_ZERO));
        emulated.zero(0, (1 << 20) + 0, io.pagewise.device.ZeroFlag.TRIM);
        ByteBuffer check = ByteBuffer.allocate(4);
        memory.readFully(check, 100);
        assertEquals(ByteBuffer.allocate(4), check.flip(), "the zeros were written");
        assertEquals(1, writes[0]);
    }

    /** The contract's buffer convention through every filter: reads and writes move each position to its limit. */
    @ParameterizedTest
    @CsvSource({"cow", "error", "delay:all=0ms", "rate:rate=1G", "stats", "blocksize:minblock=4K", "noextents",
        "nozero:mode=emulate"})
    void everyFilterMovesThePositionsOfItsBuffers(String spec) throws IOException {
        try (BlockDevice filtered = Filters.apply(new MemoryDevice(1 << 20), List.of(spec))) {
            ByteBuffer one = ByteBuffer.wrap(new byte[5000]);
            ByteBuffer[] two = {ByteBuffer.wrap(new byte[100]), ByteBuffer.wrap(new byte[7000])};
            filtered.write(one, 100, false);
            filtered.write(two, 9000, true);
            assertEquals(5000, one.position());
            assertEquals(100 + 7000, two[0].position() + two[1].position());
            ByteBuffer in = ByteBuffer.allocate(5000);
            ByteBuffer[] ins = {ByteBuffer.allocate(3), ByteBuffer.allocate(7097)};
            filtered.readFully(in, 100);
            filtered.readFully(ins, 9000);
            assertEquals(5000, in.position());
            assertEquals(7100, ins[0].position() + ins[1].position());
        }
    }

    /** Each bad spec, and words its message must hold: the filter, the key and the value. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "nosuch|unknown filter 'nosuch'",
        "readonly:x=1|filter readonly: unknown parameter x=1",
        "cow:size=1|filter cow: unknown parameter size=1 (it takes file, blocksize)",
        "cow:blocksize=5000|filter cow: blocksize=5000: must be a power of two",
        "cow:blocksize=1K|filter cow: blocksize=1K: must be from 4096",
        "cow:file=|filter cow: file=: expected a file name",
        "error:rate=2|filter error: rate=2: must be from 0 to 1",
        "error:rate=lots|filter error: rate=lots: expected a share",
        "error:error=EBADF|filter error: error=EBADF: 'EBADF' is not one of EPERM",
        "error:ops=read,pread|filter error: ops=read,pread: 'pread' is not one of read",
        "error:seed=x|filter error: seed=x: expected a whole number",
        "delay:read=fast|filter delay: read=fast: expected a duration",
        "delay:write=20ms-10ms|filter delay: write=20ms-10ms: the minimum is longer",
        "delay:seed=1|filter delay: needs a delay",
        "rate:rate=10Q|filter rate: rate=10Q: expected bits per second, as nbdkit's rate filter takes them",
        "rate:rate=10MiB|filter rate: rate=10MiB: counts bits per second, as nbdkit's rate filter does, and takes no"
                + " byte unit: for 10MiB/s write rate=80M",
        "rate:connection-rate=10MB/s|filter rate: connection-rate=10MB/s: counts bits per second, as nbdkit's rate"
                + " filter does, and takes no byte unit: for 10MB/s write connection-rate=80M",
        "rate:rate=100b|filter rate: rate=100b: counts bits per second, as nbdkit's rate filter does, and takes no"
                + " byte unit: for 100b/s write rate=800",
        "rate:rate=7|filter rate: rate=7: must be 8 bits per second (1 byte) or more",
        "rate:rate=0|filter rate: rate=0: must be 8 bits per second (1 byte) or more",
        "rate:rate=9E|filter rate: rate=9E: out of range",
        "rate:rate=99999999999999999999|filter rate: rate=99999999999999999999: out of range",
        "rate:burstiness=1|filter rate: needs rate=",
        "rate:rate=1M,burstiness=0|filter rate: burstiness=0: must be more than 0",
        "stats:interval=-1s|filter stats: interval=-1s: must be a duration",
        "stats:append=maybe|filter stats: append=maybe: expected true or false",
        "blocksize:minblock=3|filter blocksize: minblock=3: must be a power of two",
        "blocksize:minblock=4K,maxdata=6K|filter blocksize: maxdata=6K: must be a multiple of minblock=4096",
        "blocksize:maxdata=2G|filter blocksize: maxdata=2G: must be from 1 to",
        "stats:file=x,file=y|filter stats: file given twice",
        "noextents:x=1|filter noextents: unknown parameter x=1 (it takes none)",
        "nozero:mode=fast|filter nozero: mode=fast: expected none or emulate",
    })
    void badSpecsAreRefusedNamingTheFilterTheKeyAndTheValue(String spec, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Filters.apply(new MemoryDevice(4096), List.of("readonly", spec)));
        assertTrue(e.getMessage().startsWith(expected), "'" + e.getMessage() + "' should start with '" + expected + "'");
    }

    /** rate= and connection-rate= count bits per second, as nbdkit's do: the same key gives the same rate. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "rate:rate=80M|10485760|0",
        "rate:rate=8m|1048576|0",
        "rate:connection-rate=8K|0|1024",
        "rate:rate=1G,connection-rate=800k|134217728|102400",
        "rate:rate=1000|125|0",
        "rate:rate=12|1|0",
        "rate:rate=7E|1008806316530991104|0",
    })
    void rateCountsBitsPerSecondAsNbdkit(String spec, long total, long perConnection) throws IOException {
        RateFilter limited = (RateFilter) Filters.apply(new MemoryDevice(4096), List.of(spec));
        assertEquals(total, limited.totalBytesPerSecond(), spec + ": bytes per second of all connections");
        assertEquals(perConnection, limited.connectionBytesPerSecond(), spec + ": bytes per second of each");
    }

    @Test
    void aBadSpecOpensNothing() {
        Path overlay = dir.resolve("never.cow");
        assertThrows(IllegalArgumentException.class,
                () -> Filters.apply(new MemoryDevice(4096), List.of("cow:file=" + overlay, "rate:rate=x")));
        assertTrue(java.nio.file.Files.notExists(overlay), "the overlay of an inner filter was not created");
        assertInstanceOf(List.class, Filters.names());
        assertEquals(List.of("cow", "error", "delay", "rate", "readonly", "stats", "blocksize", "noextents", "nozero"),
                Filters.names());
    }
}
