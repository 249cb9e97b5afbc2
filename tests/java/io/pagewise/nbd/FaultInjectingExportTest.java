package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.nbd.FaultInjectingExport.Injection;
import io.pagewise.nbd.FaultInjectingExport.Operation;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wrapper on its own: what it fails, with which error, before touching the wrapped export, reproducibly. */
class FaultInjectingExportTest {
    private static final int SIZE = 1 << 20;

    @Test
    void aFailedWriteReachesNothingAndAFailedReadLeavesTheBufferAlone() throws IOException {
        MemoryExport memory = new MemoryExport(SIZE, false);
        memory.write(ByteBuffer.wrap(filled(4096, (byte) 7)), 0, false);
        FaultInjectingExport faulty = FaultInjectingExport.wrap(memory).fail(1.0, NbdException.ENOSPC).build();

        ByteBuffer src = ByteBuffer.wrap(filled(4096, (byte) 9));
        NbdException failed = assertThrows(NbdException.class, () -> faulty.write(src, 0, false));
        assertEquals(NbdException.ENOSPC, failed.error());
        assertEquals(0, src.position(), "the source buffer was not consumed");
        assertThrows(NbdException.class, () -> faulty.zero(0, 4096, false, false, false));
        assertThrows(NbdException.class, () -> faulty.trim(0, 4096, false));

        ByteBuffer dst = ByteBuffer.allocate(4096);
        assertThrows(NbdException.class, () -> faulty.readFully(new ByteBuffer[] {dst}, 0));
        assertEquals(0, dst.position(), "the read buffer was not touched");

        ByteBuffer check = ByteBuffer.allocate(4096);
        memory.readFully(check, 0);
        assertArrayEquals(filled(4096, (byte) 7), check.array(), "the wrapped export kept its data");
        assertEquals(4, faulty.injected(Operation.WRITE) + faulty.injected(Operation.ZERO)
                + faulty.injected(Operation.TRIM) + faulty.injected(Operation.READ));
    }

    @Test
    void theMessageNamesTheCallAndTheRecordMatchesIt() throws IOException {
        FaultInjectingExport faulty = FaultInjectingExport.wrap(new MemoryExport(SIZE, false))
                .fail(Operation.ZERO, 1.0, NbdException.EIO).recordInjections().build();
        faulty.flush(); // call #1, not failed: only ZERO has faults
        NbdException failed = assertThrows(NbdException.class, () -> faulty.zero(8192, 512, true, false, false));
        assertEquals("injected EIO, call #2: WRITE_ZEROES at 8192 (+512)", failed.getMessage());
        assertEquals(List.of(new Injection(2, Operation.ZERO, 8192, 512, NbdException.EIO)), faulty.injections());
        assertEquals(1, faulty.calls(Operation.FLUSH));
        assertEquals(0, faulty.injected(Operation.FLUSH));
    }

    @Test
    void theRateHoldsOverManyCallsAndTheErrorsAreMixed() throws IOException {
        FaultInjectingExport faulty = FaultInjectingExport.wrap(new MemoryExport(SIZE, false))
                .fail(Operation.READ, 0.10, NbdException.EIO, NbdException.ENOSPC).seed(1).build();
        int calls = 20_000;
        for (int i = 0; i < calls; i++) {
            try {
                faulty.readFully(ByteBuffer.allocate(16), i);
            } catch (NbdException e) {
                assertTrue(e.error() == NbdException.EIO || e.error() == NbdException.ENOSPC, e.getMessage());
            }
        }
        long injected = faulty.injected(Operation.READ);
        // 10 % of 20000 is 2000, with a standard deviation of about 42: six of them either side.
        assertTrue(injected > 1750 && injected < 2250, "injected " + injected + " of " + calls);
        long eio = faulty.injected(Operation.READ, NbdException.EIO);
        assertEquals(injected, eio + faulty.injected(Operation.READ, NbdException.ENOSPC));
        assertTrue(eio > injected / 3 && eio < injected * 2 / 3, "EIO " + eio + " of " + injected);
    }

    @Test
    void theSameSeedFailsTheSameCalls() throws IOException {
        assertEquals(failedCalls(42), failedCalls(42));
        assertFalse(failedCalls(42).equals(failedCalls(43)), "another seed, other calls");
    }

    private static List<Long> failedCalls(long seed) throws IOException {
        FaultInjectingExport faulty = FaultInjectingExport.wrap(new MemoryExport(SIZE, false))
                .fail(0.25, NbdException.EIO).seed(seed).recordInjections().build();
        for (int i = 0; i < 200; i++) {
            try {
                if (i % 2 == 0) faulty.flush(); else faulty.cache(i, 1);
            } catch (NbdException expected) {
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
        FaultInjectingExport faulty = FaultInjectingExport.wrap(new MemoryExport(SIZE, false))
                .fail(1.0).delay(Operation.FLUSH, Duration.ofMillis(20), Duration.ofMillis(20)).build();
        faulty.setActive(false);
        faulty.flush();
        faulty.write(ByteBuffer.allocate(512), 0, false);
        assertEquals(0, faulty.delayed(Operation.FLUSH));
        faulty.setActive(true);
        long start = System.nanoTime();
        NbdException failed = assertThrows(NbdException.class, faulty::flush);
        assertEquals(NbdException.EIO, failed.error(), "EIO when no error is named");
        assertTrue(System.nanoTime() - start >= 20_000_000, "the fixed delay was waited");
        assertEquals(1, faulty.delayed(Operation.FLUSH));
        assertEquals(2, faulty.calls(Operation.FLUSH));
    }

    @Test
    void queriesAreForwarded() {
        MemoryExport memory = new MemoryExport(SIZE, true);
        FaultInjectingExport faulty = FaultInjectingExport.wrap(memory).fail(1.0).build();
        assertEquals(memory.canWrite(), faulty.canWrite());
        assertEquals(memory.canMultiConn(), faulty.canMultiConn());
        assertEquals(memory.canExtents(), faulty.canExtents());
        assertEquals(SIZE, assertDoesNotFail(faulty));
    }

    private static long assertDoesNotFail(Export export) {
        try {
            return export.size();
        } catch (IOException e) {
            throw new AssertionError("size() is never injected into", e);
        }
    }

    @Test
    void badSettingsAreRefusedByName() {
        FaultInjectingExport.Builder b = FaultInjectingExport.wrap(new MemoryExport(SIZE, false));
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
