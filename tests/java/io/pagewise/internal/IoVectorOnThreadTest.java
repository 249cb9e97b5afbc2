package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The thread's own request is reused, but never while a call on the same thread still holds it. */
class IoVectorOnThreadTest {
    @Test
    void aReleasedRequestIsTheThreadsNextOne() {
        IoVector first = IoVector.toReadOnThread(ByteBuffer.allocateDirect(4096), 0);
        first.release();
        IoVector second = IoVector.toWriteOnThread(ByteBuffer.allocateDirect(512), 8192);
        try {
            assertSame(first, second);
            assertEquals(8192, second.offset());
            assertEquals(512, second.length());
        } finally {
            second.release();
        }
    }

    @Test
    void aCallInsideAnotherOnTheSameThreadGetsItsOwnRequest() {
        IoVector outer = IoVector.toReadOnThread(ByteBuffer.allocateDirect(4096), 4096);
        try {
            IoVector inner = IoVector.toWriteOnThread(ByteBuffer.allocate(100), 1 << 20);
            try {
                assertNotSame(outer, inner);
            } finally {
                inner.release();
            }
            assertEquals(4096, outer.offset(), "the outer call's request was overwritten");
            assertEquals(4096, outer.length());
        } finally {
            outer.release();
        }
    }
}
