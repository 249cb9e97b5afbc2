package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.lang.reflect.Field;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The FFM classes (JDK 22+, tag ffm: run by the ffm-suite only) spell out the C library's and the kernel's numbers
 * that C takes from headers: flags, ioctls, advice values, struct offsets, and per architecture the system call
 * numbers and O_DIRECT. That architecture's C compiler checks each against its headers: gcc for x86_64, Debian's
 * aarch64-linux-gnu-gcc for aarch64, which this machine cannot otherwise run the FFM calls on.
 */
@Tag("ffm")
@Timeout(120)
class FfmConstantsTest {
    /** Private constants of the FFM classes, as class name and field, with the C expression each must equal. */
    private static final Map<String, String> SHARED = new LinkedHashMap<>();

    static {
        for (String name : new String[] {"O_RDWR", "O_ACCMODE", "O_CREAT", "O_EXCL", "O_TRUNC", "O_DSYNC", "O_CLOEXEC",
                "F_GETFL", "AT_EMPTY_PATH", "STATX_BASIC_STATS", "STATX_DIOALIGN", "S_IFMT", "S_IFREG", "S_IFBLK",
                "BLKGETSIZE64", "BLKSSZGET"}) {
            SHARED.put("FileDescriptorsBinding." + name, name);
        }
        SHARED.put("SpaceBinding.FALLOC_FL_KEEP_SIZE", "FALLOC_FL_KEEP_SIZE");
        SHARED.put("SpaceBinding.FALLOC_FL_PUNCH_HOLE", "FALLOC_FL_PUNCH_HOLE");
        SHARED.put("SpaceBinding.FALLOC_FL_ZERO_RANGE", "FALLOC_FL_ZERO_RANGE");
        SHARED.put("SpaceBinding.NATIVE_SEEK_DATA", "SEEK_DATA");
        SHARED.put("SpaceBinding.NATIVE_SEEK_HOLE", "SEEK_HOLE");
        SHARED.put("MincoreBinding.PROT_NONE", "PROT_NONE");
        SHARED.put("MincoreBinding.PROT_READ", "PROT_READ");
        SHARED.put("MincoreBinding.MAP_SHARED", "MAP_SHARED");
        SHARED.put("MemoryBinding.PROT_READ_WRITE", "PROT_READ | PROT_WRITE");
        SHARED.put("MemoryBinding.MAP_PRIVATE_ANONYMOUS", "MAP_PRIVATE | MAP_ANONYMOUS");
        SHARED.put("MemoryBinding.MADV_HUGEPAGE", "MADV_HUGEPAGE");
        SHARED.put("PositionalIoBinding.RWF_DSYNC", "RWF_DSYNC");
        SHARED.put("PositionalIoBinding.IOV_MAX", "IOV_MAX");
        SHARED.put("Errno.EINVAL", "EINVAL");
        SHARED.put("Errno.ENAMETOOLONG", "ENAMETOOLONG");
        SHARED.put("ProcessControlBinding.EBUSY", "EBUSY");
        SHARED.put("ProcessControlBinding.PR_SET_PDEATHSIG", "PR_SET_PDEATHSIG");
        SHARED.put("ProcessControl.SIGTERM", "SIGTERM");
        SHARED.put("Ffm.EINTR", "EINTR");
        SHARED.put("Ffm.ENOSYS", "ENOSYS");
        SHARED.put("Ffm.EOPNOTSUPP", "EOPNOTSUPP");
    }

    private static final String[] ADVICE = {"POSIX_FADV_NORMAL", "POSIX_FADV_SEQUENTIAL", "POSIX_FADV_RANDOM",
            "POSIX_FADV_NOREUSE", "POSIX_FADV_WILLNEED", "POSIX_FADV_DONTNEED"};

    private static final String[][] PER_ARCH = {{"preadv2", "SYS_preadv2"}, {"pwritev2", "SYS_pwritev2"},
            {"ioSetup", "SYS_io_setup"}, {"ioDestroy", "SYS_io_destroy"}, {"ioSubmit", "SYS_io_submit"},
            {"ioGetevents", "SYS_io_getevents"}, {"statx", "SYS_statx"}, {"oDirect", "O_DIRECT"}};

    /**
     * The struct layouts the FFM code reads and writes by offset (FileDescriptors: statx; PositionalIoBinding: iovec,
     * iocb, io_event), and the enum values it spells out, as C expressions that must be true on both architectures.
     */
    private static final String[] LAYOUTS = {
        "sizeof(struct iovec) == 16", "sizeof(struct statx) == 256", "offsetof(struct statx, stx_mask) == 0",
        "offsetof(struct statx, stx_blksize) == 4", "offsetof(struct statx, stx_mode) == 28",
        "offsetof(struct statx, stx_size) == 40", "offsetof(struct statx, stx_blocks) == 48",
        "offsetof(struct statx, stx_rdev_major) == 128", "offsetof(struct statx, stx_rdev_minor) == 132",
        "offsetof(struct statx, stx_dev_major) == 136", "offsetof(struct statx, stx_dev_minor) == 140",
        "offsetof(struct statx, stx_dio_mem_align) == 152", "offsetof(struct statx, stx_dio_offset_align) == 156",
        "offsetof(struct statfs, f_type) == 0 && sizeof(((struct statfs *) 0)->f_type) == 8",
        "sizeof(struct statfs) <= 256", "sizeof(struct iocb) == 64", "offsetof(struct iocb, aio_rw_flags) == 12",
        "offsetof(struct iocb, aio_lio_opcode) == 16", "offsetof(struct iocb, aio_fildes) == 20",
        "offsetof(struct iocb, aio_buf) == 24", "offsetof(struct iocb, aio_nbytes) == 32",
        "offsetof(struct iocb, aio_offset) == 40", "sizeof(struct io_event) == 32",
        "offsetof(struct io_event, res) == 16", "IOCB_CMD_PWRITEV == 8", "_SC_PAGESIZE == 30",
        "LC_MESSAGES_MASK == (1 << 5)",
    };

    @Test
    void theFfmClassesUseEachArchitecturesNumbers() throws Exception {
        assertEquals("FFM", io.pagewise.Native.binding(), "these constants are the FFM classes'");
        Map<String, String> expressions = new LinkedHashMap<>(SHARED);
        for (int i = 0; i < ADVICE.length; i++) expressions.put("AdviceBinding.NATIVE_ADVICE[" + i + "]", ADVICE[i]);
        Class<?> arch = Class.forName("io.pagewise.internal.Ffm$Arch");
        for (String compiler : new String[] {"gcc", "aarch64-linux-gnu-gcc"}) {
            ExternalTools.require(compiler);
            String archName = compiler.startsWith("aarch64") ? "AARCH64" : "X86_64";
            StringBuilder checks = new StringBuilder();
            int count = 0;
            Map<String, String> all = new LinkedHashMap<>(expressions);
            for (String[] field : PER_ARCH) all.put(archName + "." + field[0], field[1]);
            for (Map.Entry<String, String> entry : all.entrySet()) {
                checks.append(String.format("_Static_assert((long long) (%s) == %dLL, \"%s is %s\");%n",
                        entry.getValue(), javaValue(arch, entry.getKey()), entry.getKey(), javaValue(arch, entry.getKey())));
                count++;
            }
            for (String layout : LAYOUTS) {
                checks.append(String.format("_Static_assert(%s, \"%s\");%n", layout, layout));
                count++;
            }
            compile(compiler, checks.toString());
            assertTrue(count > 50, "checked " + count);
        }
    }

    /** Compiles checks after the headers the C layer includes; a false static assertion fails with its text. */
    private static void compile(String compiler, String checks) throws Exception {
        StringBuilder source = new StringBuilder("#define _GNU_SOURCE\n");
        for (String header : new String[] {"errno.h", "fcntl.h", "limits.h", "locale.h", "stddef.h", "sys/mman.h",
                "sys/stat.h", "sys/statfs.h", "sys/syscall.h", "sys/uio.h", "linux/aio_abi.h", "linux/fs.h",
                "linux/falloc.h", "linux/stat.h", "signal.h", "sys/prctl.h", "unistd.h"}) {
            source.append("#include <").append(header).append(">\n");
        }
        source.append(checks);
        java.nio.file.Path file = java.nio.file.Files.createTempFile("pagewise-constants", ".c");
        try {
            java.nio.file.Files.writeString(file, source);
            ExternalTools.run(60, compiler, "-std=gnu11", "-fsyntax-only", file.toString())
                    .assertOk(compiler + " checking the FFM classes' numbers");
        } finally {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    private static Long javaValue(Class<?> arch, String key) throws Exception {
        if (key.startsWith("X86_64.") || key.startsWith("AARCH64.")) {
            String[] parts = key.split("\\.");
            Object constant = Enum.valueOf(arch.asSubclass(Enum.class), parts[0]);
            Field field = arch.getDeclaredField(parts[1]);
            field.setAccessible(true);
            return ((Number) field.get(constant)).longValue();
        }
        String[] parts = key.split("\\.", 2);
        String name = parts[1].replaceAll("\\[\\d+]$", "");
        Field field = Class.forName("io.pagewise.internal." + parts[0]).getDeclaredField(name);
        field.setAccessible(true);
        Object value = field.get(null);
        if (value instanceof int[] array) return (long) array[Integer.parseInt(parts[1].replaceAll(".*\\[(\\d+)]", "$1"))];
        return ((Number) value).longValue();
    }
}
