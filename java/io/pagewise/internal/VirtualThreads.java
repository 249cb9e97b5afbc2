package io.pagewise.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** Whether the calling thread is a virtual thread (JDK 21 and later; never on 17, which has none). */
public final class VirtualThreads {
    private static final MethodHandle IS_VIRTUAL = isVirtual();

    private VirtualThreads() {}

    /** {@return true when the calling thread is virtual} */
    public static boolean current() {
        if (IS_VIRTUAL == null) return false;
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable e) {
            return false;
        }
    }

    private static MethodHandle isVirtual() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException olderThan21) {
            return null;
        }
    }
}
