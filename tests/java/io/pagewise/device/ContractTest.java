package io.pagewise.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Extent;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The contract's small parts: ZeroFlag's sets, DeviceException's errnos, and a FilterDevice that forwards everything. */
@Timeout(30)
class ContractTest {
    @Test
    void zeroFlagSetsNameExactlyTheFlagsAskedForAndAreShared() {
        for (int bits = 0; bits < 8; bits++) {
            boolean mayTrim = (bits & 1) != 0, fast = (bits & 2) != 0, fua = (bits & 4) != 0;
            Set<ZeroFlag> expected = EnumSet.noneOf(ZeroFlag.class);
            if (mayTrim) expected.add(ZeroFlag.MAY_TRIM);
            if (fast) expected.add(ZeroFlag.FAST);
            if (fua) expected.add(ZeroFlag.FUA);
            Set<ZeroFlag> set = ZeroFlag.of(mayTrim, fast, fua);
            assertEquals(expected, set, "bits " + bits);
            assertSame(set, ZeroFlag.of(mayTrim, fast, fua), "the server's hot path allocates no set");
            assertThrows(UnsupportedOperationException.class, () -> set.add(ZeroFlag.FAST));
        }
        assertEquals(Set.of(), ZeroFlag.NONE);
        assertEquals(Set.of(ZeroFlag.MAY_TRIM), ZeroFlag.TRIM);
    }

    @Test
    void everyFailureHasAnErrno() {
        assertEquals(DeviceException.ENOSPC, DeviceException.errnoOf(new DeviceException(DeviceException.ENOSPC, "full")));
        assertEquals(DeviceException.EPERM, DeviceException.errnoOf(new AccessDeniedException("/x")));
        assertEquals(DeviceException.ESHUTDOWN, DeviceException.errnoOf(new ClosedChannelException()));
        assertEquals(DeviceException.EINVAL, DeviceException.errnoOf(new IllegalArgumentException("bad")));
        assertEquals(DeviceException.ENOSPC, DeviceException.errnoOf(new IOException("No space left on device")));
        assertEquals(DeviceException.EIO, DeviceException.errnoOf(new IOException("anything")));
        assertEquals("ENOTSUP", new DeviceException(DeviceException.ENOTSUP, "no").errnoName());
    }

    /** A method added to BlockDevice that FilterDevice does not forward would silently bypass every filter. */
    @Test
    void filterDeviceForwardsEveryMethodOfTheContract() throws Exception {
        List<String> notForwarded = new ArrayList<>();
        for (Method method : BlockDevice.class.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) continue;
            try {
                Method own = FilterDevice.class.getDeclaredMethod(method.getName(), method.getParameterTypes());
                if (Modifier.isAbstract(own.getModifiers())) notForwarded.add(method.toString());
            } catch (NoSuchMethodException e) {
                notForwarded.add(method.toString());
            }
        }
        assertEquals(List.of(), notForwarded, "BlockDevice methods FilterDevice leaves to the defaults");
    }

    /** The defaults: read-only, all data, and refusals with the errno the contract names. */
    @Test
    void theDefaultsOfAMinimalDevice() throws Exception {
        BlockDevice minimal = new BlockDevice() {
            @Override public long size() { return 8192; }

            @Override public void readFully(ByteBuffer dst, long offset) {
                while (dst.hasRemaining()) dst.put((byte) 1);
            }
        };
        ByteBuffer[] vector = {ByteBuffer.allocate(100), ByteBuffer.allocate(200)};
        minimal.readFully(vector, 0);
        assertTrue(!vector[0].hasRemaining() && !vector[1].hasRemaining(), "the vectored read fills every buffer");
        assertEquals(DeviceException.EPERM, assertThrows(DeviceException.class,
                () -> minimal.write(ByteBuffer.allocate(1), 0, false)).errno());
        assertEquals(DeviceException.EPERM, assertThrows(DeviceException.class,
                () -> minimal.write(new ByteBuffer[] {ByteBuffer.allocate(1)}, 0, false)).errno());
        assertEquals(DeviceException.ENOTSUP, assertThrows(DeviceException.class,
                () -> minimal.zero(0, 512, ZeroFlag.NONE)).errno());
        assertEquals(List.of(new Extent(0, 8192, false)), minimal.extents(0, 8192, 10));
        assertEquals(Capabilities.NONE, minimal.capabilities(), "read-only, and all data");
        assertEquals(1, minimal.minimumBlockSize());
        assertEquals(Integer.MAX_VALUE, minimal.maximumBlockSize());
    }
}
