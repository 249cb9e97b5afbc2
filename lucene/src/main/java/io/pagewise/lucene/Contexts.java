package io.pagewise.lucene;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Collection;
import org.apache.lucene.store.IOContext;

/**
 * Reads an {@link IOContext} on both Lucene lines. This module is compiled against Lucene 9, where IOContext is a
 * class with public fields ({@code context}, {@code readOnce}); Lucene 10 made it an interface with accessor methods
 * and hints ({@code context()}, {@code hints()} holding a {@code ReadOnceHint}). A field read compiled against one
 * fails on the other, so the shape is looked up once, here.
 */
final class Contexts {
    private static final MethodHandle CONTEXT;
    private static final MethodHandle READ_ONCE_FLAG;
    private static final MethodHandle HINTS;
    /** Lucene 10's {@code ReadOnceHint}; null on Lucene 9. */
    private static final Class<?> READ_ONCE_HINT;

    static {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        Class<?> contextEnum = contextEnum();
        MethodHandle context;
        MethodHandle readOnce = null;
        MethodHandle hints = null;
        Class<?> readOnceHint = null;
        try {
            context = lookup.findGetter(IOContext.class, "context", contextEnum);
            readOnce = lookup.findGetter(IOContext.class, "readOnce", boolean.class);
        } catch (ReflectiveOperationException lucene10) {
            try {
                context = lookup.findVirtual(IOContext.class, "context", MethodType.methodType(contextEnum));
                hints = lookup.findVirtual(IOContext.class, "hints", MethodType.methodType(java.util.Set.class));
                readOnceHint = Class.forName("org.apache.lucene.store.ReadOnceHint", false,
                        IOContext.class.getClassLoader());
            } catch (ReflectiveOperationException neither) {
                neither.addSuppressed(lucene10);
                throw new ExceptionInInitializerError(neither);
            }
        }
        CONTEXT = context.asType(MethodType.methodType(Object.class, IOContext.class));
        READ_ONCE_FLAG = readOnce;
        READ_ONCE_HINT = readOnceHint;
        HINTS = hints == null ? null : hints.asType(MethodType.methodType(Object.class, IOContext.class));
    }

    private Contexts() {}

    private static Class<?> contextEnum() {
        try {
            return Class.forName(IOContext.class.getName() + "$Context", false, IOContext.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@return which kind of I/O the context asks for; null is read as DEFAULT} */
    static ContextKind kindOf(IOContext context) {
        if (context == null) return ContextKind.DEFAULT;
        try {
            Object kind = CONTEXT.invokeExact(context);
            String name = ((Enum<?>) kind).name();
            if (name.equals("MERGE")) return ContextKind.MERGE;
            if (name.equals("FLUSH")) return ContextKind.FLUSH;
            return isReadOnce(context) ? ContextKind.READ_ONCE : ContextKind.DEFAULT;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot read Lucene's IOContext " + context, e);
        }
    }

    private static boolean isReadOnce(IOContext context) throws Throwable {
        if (READ_ONCE_FLAG != null) return (boolean) READ_ONCE_FLAG.invokeExact(context);
        Object hints = HINTS.invokeExact(context);
        for (Object hint : (Collection<?>) hints) {
            if (READ_ONCE_HINT.isInstance(hint)) return true;
        }
        return false;
    }
}
