package io.pagewise.filters;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.FaultFilter.Injection;
import io.pagewise.filters.FaultFilter.Operation;
import io.pagewise.filters.ReadOnlyFilter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wrapper on its own: what it fails, with which error, before touching the wrapped export, reproducibly. */
class FaultFilterTest {
    private static final int SIZE = 1 << 20;

    @Test
    void aFailedWriteReachesNothingAndAFailedReadLeavesTheBufferAlone() throws IOException {
        MemoryDevice memory = new MemoryDevice(SIZE);
        memory.write(ByteBuffer.wrap(filled(4096, (byte) 7)), 0, false);
        FaultFilter faulty = FaultFilter.wrap(memory).fail(1.0, DeviceException.ENOSPC).build();

        ByteBuffer src = ByteBuffer.wrap(filled(4096, (byte) 9));
        DeviceException failed = assertThrows(DeviceException.class, () -> faulty.write(src, 0, false));
        assertEquals(DeviceException.ENOSPC, failed.errno());
        assertEquals(0, src.position(), "the source buffer was not consumed");
        assertThrows(DeviceException.class, () -> faulty.zero(0, 4096, ZeroFlag.NONE));
        assertThrows(DeviceException.class, () -> faulty.trim(0, 4096, false));

        ByteBuffer dst = ByteBuffer.allocate(4096);
        assertThrows(DeviceException.class, () -> faulty.readFully(new ByteBuffer[] {dst}, 0));
        assertEquals(0, dst.position(), "the read buffer was not touched");

        ByteBuffer check = ByteBuffer.allocate(4096);
        memory.readFully(check, 0);
        assertArrayEquals(filled(4096, (byte) 7), check.array(), "the wrapped export kept its data");
        assertEquals(4, faulty.injected(Operation.WRITE) + faulty.injected(Operation.ZERO)
                + faulty.injected(Operation.TRIM) + faulty.injected(Operation.READ));
    }

    @Test
    void theMessageNamesTheCallAndTheRecordMatchesIt() throws IOException {
        FaultFilter faulty = FaultFilter.wrap(new MemoryDevice(SIZE))
                .fail(Operation.ZERO, 1.0, DeviceException.EIO).recordInjections().build();
        faulty.flush(); // call #1, not failed: only ZERO has faults
        DeviceException failed = assertThrows(DeviceException.class, () -> faulty.zero(8192, 512, ZeroFlag.TRIM));
        assertEquals("injected EIO, call #2: WRITE_ZEROES at 8192 (+512)", failed.getMessage());
        assertEquals(List.of(new Injection(2, Operation.ZERO, 8192, 512, DeviceException.EIO)), faulty.injections());
        assertEquals(1, faulty.calls(Operation.FLUSH));
        assertEquals(0, faulty.injected(Operation.FLUSH));
    }

    @Test
    void theRateHoldsOverManyCallsAndTheErrorsAreMixed() throws IOException {
        FaultFilter faulty = FaultFilter.wrap(new MemoryDevice(SIZE))
                .fail(Operation.READ, 0.10, DeviceException.EIO, DeviceException.ENOSPC).seed(1).build();
        int calls = 20_000;
        for (int i = 0; i < calls; i++) {
            try {
                faulty.readFully(ByteBuffer.allocate(16), i);
            } catch (DeviceException e) {
                assertTrue(e.errno() == DeviceException.EIO || e.errno() == DeviceException.ENOSPC, e.getMessage());
            }
        }
        long injected = faulty.injected(Operation.READ);
        // 10 % of 20000 is 2000, with a standard deviation of about 42: six of them either side.
        assertTrue(injected > 1750 && injected < 2250, "injected " + injected + " of " + calls);
        long eio = faulty.injected(Operation.READ, DeviceException.EIO);
        assertEquals(injected, eio + faulty.injected(Operation.READ, DeviceException.ENOSPC));
        assertTrue(eio > injected / 3 && eio < injected * 2 / 3, "EIO " + eio + " of " + injected);
    }

    @Test
    void theSameSeedFailsTheSameCalls() throws IOException {
        assertEquals(failedCalls(42), failedCalls(42));
        assertFalse(failedCalls(42).equals(failedCalls(43)), "another seed, other calls");
    }

    private static List<Long> failedCalls(long seed) throws IOException {
        FaultFilter faulty = FaultFilter.wrap(new MemoryDevice(SIZE))
                .fail(0.25, DeviceException.EIO).seed(seed).recordInjections().build();
        for (int i = 0; i < 200; i++) {
            try {
                if (i % 2 == 0) faulty.flush(); else faulty.cache(i, 1);
            } catch (DeviceException expected) {
                // counted in the record
            }
        }
        List<Long> calls = new ArrayList<>();
        for (Injection injection : faulty.injections()) calls.add(injection.call());
        calls.sort(null);
        assertTrue(calls.size() > 20, "some of the 200 calls failed: " + calls.size());
        return calls;
    }

    @Test
    void inactiveItOnlyForwardsAndDelaysComeBeforeTheDecision() throws IOException {
        FaultFilter faulty = FaultFilter.wrap(new MemoryDevice(SIZE))
                .fail(1.0).delay(Operation.FLUSH, Duration.ofMillis(20), Duration.ofMillis(20)).build();
        faulty.setActive(false);
        faulty.flush();
        faulty.write(ByteBuffer.allocate(512), 0, false);
        assertEquals(0, faulty.delayed(Operation.FLUSH));
        faulty.setActive(true);
        long start = System.nanoTime();
        DeviceException failed = assertThrows(DeviceException.class, faulty::flush);
        assertEquals(DeviceException.EIO, failed.errno(), "EIO when no error is named");
        assertTrue(System.nanoTime() - start >= 20_000_000, "the fixed delay was waited");
        assertEquals(1, faulty.delayed(Operation.FLUSH));
        assertEquals(2, faulty.calls(Operation.FLUSH));
    }

    @Test
    void queriesAreForwarded() {
        BlockDevice memory = new ReadOnlyFilter(new MemoryDevice(SIZE));
        FaultFilter faulty = FaultFilter.wrap(memory).fail(1.0).build();
        assertEquals(memory.capabilities(), faulty.capabilities());
        assertEquals(SIZE, assertDoesNotFail(faulty));
    }

    private static long assertDoesNotFail(BlockDevice export) {
        try {
            return export.size();
        } catch (IOException e) {
            throw new AssertionError("size() is never injected into", e);
        }
    }

    @Test
    void badSettingsAreRefusedByName() {
        FaultFilter.Builder b = FaultFilter.wrap(new MemoryDevice(SIZE));
        IllegalArgumentException rate = assertThrows(IllegalArgumentException.class, () -> b.fail(1.5));
        assertTrue(rate.getMessage().contains("rate"), rate.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.fail(Double.NaN));
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> b.fail(0.1, 4));
        assertTrue(error.getMessage().contains("4"), error.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.delay(Duration.ofMillis(5), Duration.ofMillis(1)));
        assertThrows(IllegalArgumentException.class, () -> b.delay(Duration.ofMillis(-1), Duration.ofMillis(1)));
    }

    private static byte[] filled(int n, byte value) {
        byte[] bytes = new byte[n];
        Arrays.fill(bytes, value);
        return bytes;
    }
}
