package io.pagewise.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.CacheMode;
import io.pagewise.internal.FileDescriptors;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What each mode's descriptor holds at the kernel (fcntl F_GETFL), not what Java meant to ask: DIRECTSYNC's
 * durability of every write rests on O_DSYNC, the direct modes' bypass of the cache on O_DIRECT.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KernelOpenFlagsTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void theDescriptorHoldsTheFlagsTheModeRestsOn(CacheMode mode) throws IOException {
        ExternalTools.requireNativeLibrary();
        Path path = dir.resolve("flags");
        int flags = FileDescriptors.READ_WRITE | FileDescriptors.CREATE | CachePolicy.openFlags(mode);
        try (NativeRawFile file = NativeRawFile.open(path, flags)) {
            int held = file.kernelOpenFlags();
            assertEquals(FileDescriptors.READ_WRITE, held & FileDescriptors.READ_WRITE, mode + ": read-write");
            assertEquals(mode.isDirect(), (held & FileDescriptors.DIRECT) != 0, mode + ": O_DIRECT");
            assertEquals(mode == CacheMode.DIRECTSYNC, (held & FileDescriptors.DSYNC) != 0, mode + ": O_DSYNC");
        }
    }
}
