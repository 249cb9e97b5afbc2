package io.pagewise.internal;

/**
 * The FFM version (JDK 22+) of the class that makes this package's native calls available: they are downcalls
 * into the C library, looked up by name, so there is no library to load. {@code -Dpagewise.native.path} names a
 * JNI library, which this JVM does not use ({@code -Djdk.util.jar.enableMultiRelease=false} makes it use the JNI
 * classes and the library instead).
 */
public final class NativeLibrary {
    private NativeLibrary() {}

    /** How the calls reach the C library: here through FFM. */
    public static String binding() {
        return "FFM";
    }

    /**
     * Looks up every C function the bindings call, and reads the errno texts.
     *
     * @param platform the jar's name for this platform, for the JNI version; not needed here
     * @throws Throwable what went wrong: UnsatisfiedLinkError naming a function the C library lacks or an
     *                   architecture whose system calls are not known, IllegalCallerException where native access
     *                   is not enabled for this module
     */
    public static void load(String platform) throws Throwable {
        // Each class looks up its functions when it is initialized; doing it here makes a missing one fail now.
        for (Class<?> binding : new Class<?>[] {Ffm.class, FileDescriptorsBinding.class, PositionalIoBinding.class,
                AdviceBinding.class, SpaceBinding.class, MincoreBinding.class, ProcessControlBinding.class,
                ErrnoTexts.class}) {
            try {
                Class.forName(binding.getName(), true, NativeLibrary.class.getClassLoader());
            } catch (ExceptionInInitializerError e) {
                throw e.getCause() != null ? e.getCause() : e;
            }
        }
        Errno.readTexts();
    }
}
