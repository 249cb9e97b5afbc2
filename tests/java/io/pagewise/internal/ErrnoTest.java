package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Native;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/** The one errno table: its numbers are the C library's, and the NBD errors it names and maps are the spec's. */
class ErrnoTest {
    /** The constants Java decides on (EOPNOTSUPP fallback, ENXIO = no more data, ...) match the C library. */
    @Test
    void errnoConstantsMatchTheCLibrarysNames() throws Exception {
        assertTrue(Native.isAvailable(), "the names come from the native library: " + Native.loadError());
        int checked = 0;
        for (Field field : Errno.class.getFields()) {
            if (field.getType() != int.class || !Modifier.isStatic(field.getModifiers())) continue;
            assertEquals(field.getName(), Errno.name(field.getInt(null)), "Errno." + field.getName());
            checked++;
        }
        assertTrue(checked >= 15, "checked " + checked);
        assertEquals("No space left on device", Errno.description(Errno.ENOSPC));
        assertEquals("errno 9999", Errno.name(9999));
        assertEquals("errno -3", Errno.name(-3));
    }

    /**
     * The names and texts built in for the pure-Java path are the C library's, so that both paths word an error
     * alike, and the pure-Java path can tell an errno from the text the JDK reports.
     */
    @Test
    void builtInNamesAndTextsAreTheCLibrarys() throws Exception {
        assertTrue(Native.isAvailable(), "the names come from the native library: " + Native.loadError());
        int checked = 0;
        for (Field field : Errno.class.getFields()) {
            if (field.getType() != int.class || !Modifier.isStatic(field.getModifiers())) continue;
            int errno = field.getInt(null);
            assertEquals(Errno.name(errno), Errno.builtInName(errno), field.getName());
            assertEquals(Errno.description(errno), Errno.builtInDescription(errno), field.getName());
            checked++;
        }
        assertTrue(checked >= 18, "checked " + checked);
    }

    /** The names are read when the library loads, so that no failing call has to re-enter JNI to describe itself. */
    @Test
    void namesAreReadWhenTheLibraryLoadsNotOnTheFailingPath() throws Exception {
        assertTrue(Native.isAvailable(), "the names come from the native library: " + Native.loadError());
        Field names = Errno.class.getDeclaredField("NAMES");
        names.setAccessible(true);
        assertEquals("ENOSPC", ((String[]) names.get(null))[Errno.ENOSPC], "read before any name was asked for");
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
