package io.pagewise.policy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Who waits for whom at DIRECT's gate, step by step: aligned writes pass without being listed while no write with
 * edge blocks is about, and a write with edges still waits for every one of them that is in progress.
 */
@Timeout(30)
class BlockGateTest {
    private static final int BLOCK = 512;
    /** Long enough for a thread that could pass to have passed. */
    private static final long BLOCKED_MS = 300;

    private final BlockGate gate = new BlockGate(BLOCK);

    @Test
    void aReadModifyWriteWaitsForAnAlignedWriteInProgressOnItsBlock() throws Exception {
        BlockGate.Pass aligned = gate.enter(0, 4096, -1, -1);
        CompletableFuture<BlockGate.Pass> edged = CompletableFuture.supplyAsync(() -> gate.enter(0, 512, 0, -1));
        assertBlocked(edged, "a read-modify-write of block 0 while an aligned write of it is in progress");
        gate.leave(aligned);
        gate.leave(edged.get(5, TimeUnit.SECONDS));
    }

    @Test
    void aWriteThroughTheCacheWaitsForAnAlignedWriteInProgress() throws Exception {
        BlockGate.Pass aligned = gate.enter(8192, 12288, -1, -1);
        CompletableFuture<BlockGate.Pass> alone = CompletableFuture.supplyAsync(() -> gate.enterAlone(4096, Long.MAX_VALUE));
        assertBlocked(alone, "a write through the cache over an aligned write in progress");
        gate.leave(aligned);
        gate.leave(alone.get(5, TimeUnit.SECONDS));
    }

    @Test
    void whileAReadModifyWriteIsInProgressAlignedWritesToItsBlockWaitAndOthersPass() throws Exception {
        BlockGate.Pass edged = gate.enter(0, 1024, 0, 512);
        // Elsewhere: no conflict, passes at once.
        gate.leave(gate.enter(4096, 8192, -1, -1));
        CompletableFuture<BlockGate.Pass> aligned = CompletableFuture.supplyAsync(() -> gate.enter(0, 4096, -1, -1));
        assertBlocked(aligned, "an aligned write over a block being read, changed and written back");
        gate.leave(edged);
        BlockGate.Pass passed = aligned.get(5, TimeUnit.SECONDS);
        // Listed while the edged write was about; once both are out, a read-modify-write passes again.
        gate.leave(passed);
        gate.leave(gate.enter(0, 512, 0, -1));
    }

    @Test
    void alignedWritesDoNotWaitForEachOther() throws Exception {
        BlockGate.Pass first = gate.enter(0, 4096, -1, -1);
        BlockGate.Pass second = CompletableFuture.supplyAsync(() -> gate.enter(0, 4096, -1, -1)).get(5, TimeUnit.SECONDS);
        gate.leave(second);
        gate.leave(first);
    }

    private static void assertBlocked(CompletableFuture<BlockGate.Pass> entering, String what) throws Exception {
        try {
            entering.get(BLOCKED_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException expected) {
            assertFalse(entering.isDone());
            return;
        }
        fail(what + " did not wait");
    }
}
