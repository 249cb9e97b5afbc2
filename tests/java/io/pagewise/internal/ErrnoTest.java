package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Native;
import io.pagewise.testing.ExternalTools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one errno table: its numbers are the C library's, and the NBD errors it names and maps are the spec's. */
class ErrnoTest {
    /** The constants Java decides on (EOPNOTSUPP fallback, ENXIO = no more data, ...) match the C library. */
    @Test
    void errnoConstantsMatchTheCLibrarysNames() throws Exception {
        assertTrue(Native.isAvailable(), "the texts come from the native calls: " + Native.loadError());
        Map<String, Integer> constants = errnoConstants();
        constants.forEach((name, errno) -> assertEquals(name, Errno.name(errno), "Errno." + name));
        assertTrue(constants.size() >= 15, "checked " + constants.size());
        assertEquals("No space left on device", Errno.description(Errno.ENOSPC));
        assertEquals("errno 9999", Errno.name(9999));
        assertEquals("errno -3", Errno.name(-3));
    }

    /**
     * The texts built in for the pure-Java path are the C library's, so that both paths word an error alike, and the
     * pure-Java path can tell an errno from the text the JDK reports.
     */
    @Test
    void builtInTextsAreTheCLibrarys() throws Exception {
        assertTrue(Native.isAvailable(), "the texts come from the native calls: " + Native.loadError());
        Map<String, Integer> constants = errnoConstants();
        constants.forEach((name, errno) -> assertEquals(Errno.description(errno), Errno.builtInDescription(errno), name));
        assertTrue(constants.size() >= 18, "checked " + constants.size());
    }

    /** {@return Errno's public static int constants, by name} */
    private static Map<String, Integer> errnoConstants() throws IllegalAccessException {
        Map<String, Integer> constants = new LinkedHashMap<>();
        for (Field field : Errno.class.getFields()) {
            if (field.getType() == int.class && Modifier.isStatic(field.getModifiers())) {
                constants.put(field.getName(), field.getInt(null));
            }
        }
        return constants;
    }

    /** The texts are read when the calls load, so that no failing call has to go back into native code for one. */
    @Test
    void textsAreReadWhenTheLibraryLoadsNotOnTheFailingPath() throws Exception {
        assertTrue(Native.isAvailable(), "the texts come from the native calls: " + Native.loadError());
        Field texts = Errno.class.getDeclaredField("DESCRIPTIONS");
        texts.setAccessible(true);
        String[] read = (String[]) texts.get(null);
        assertEquals("Bad file descriptor", read[9], "read before any text was asked for");
        assertEquals("Memory page has hardware error", read[133], "EHWPOISON, the highest");
    }

    /**
     * The name table, which both bindings and the pure-Java path use, is each architecture's: gcc and Debian's
     * aarch64-linux-gnu-gcc check every entry against their errno.h, as static assertions.
     */
    @Test
    @Timeout(120)
    void theNameTableIsEachArchitecturesErrnoH() throws Exception {
        StringBuilder source = new StringBuilder("#define _GNU_SOURCE\n#include <errno.h>\n");
        int named = 0;
        for (int errno = 1; errno <= Errno.namedUpTo(); errno++) {
            String name = Errno.name(errno);
            if (name.startsWith("errno ")) continue;
            source.append(String.format("_Static_assert(%s == %d, \"%s is %d\");%n", name, errno, name, errno));
            named++;
        }
        assertTrue(named >= 130, "named " + named);
        Path file = Files.createTempFile("pagewise-errno", ".c");
        try {
            Files.writeString(file, source);
            for (String compiler : new String[] {"gcc", "aarch64-linux-gnu-gcc"}) {
                ExternalTools.require(compiler);
                ExternalTools.run(60, compiler, "-std=gnu11", "-fsyntax-only", file.toString())
                        .assertOk(compiler + " checking the errno names");
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** doc/proto.md, "Error values": the eight values and their names; 95 is ENOTSUP there, EOPNOTSUPP in glibc. */
    @Test
    void nbdNamesAreTheSpecs() {
        int[] values = {1, 5, 12, 22, 28, 75, 95, 108};
        String[] names = {"EPERM", "EIO", "ENOMEM", "EINVAL", "ENOSPC", "EOVERFLOW", "ENOTSUP", "ESHUTDOWN"};
        for (int i = 0; i < values.length; i++) assertEquals(names[i], Errno.nbdName(values[i]));
        assertEquals("error 2", Errno.nbdName(Errno.ENOENT), "ENOENT is not an NBD error");
    }

    /** NBD errors pass through; the spec asks for EDQUOT and EFBIG as ENOSPC; refusals are EPERM; the rest EIO. */
    @Test
    void failedCallsAnswerTheNearestNbdError() {
        for (int nbd : new int[] {Errno.EPERM, Errno.EIO, Errno.ENOMEM, Errno.EINVAL, Errno.ENOSPC, Errno.EOVERFLOW,
                Errno.EOPNOTSUPP, Errno.ESHUTDOWN}) {
            assertEquals(nbd, Errno.toNbd(nbd), Errno.nbdName(nbd));
        }
        assertEquals(Errno.ENOSPC, Errno.toNbd(Errno.EDQUOT));
        assertEquals(Errno.ENOSPC, Errno.toNbd(Errno.EFBIG));
        assertEquals(Errno.EPERM, Errno.toNbd(Errno.EACCES));
        assertEquals(Errno.EPERM, Errno.toNbd(Errno.EROFS));
        assertEquals(Errno.EIO, Errno.toNbd(Errno.ENOENT));
        assertEquals(Errno.EIO, Errno.toNbd(Errno.ENXIO));
    }
}
