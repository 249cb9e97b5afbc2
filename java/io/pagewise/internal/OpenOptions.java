package io.pagewise.internal;

import java.nio.file.OpenOption;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.Set;

/** The open options a StorageFile takes, checked, and what they ask of open(2). */
public final class OpenOptions {
    private static final Set<StandardOpenOption> SUPPORTED = EnumSet.of(StandardOpenOption.READ,
            StandardOpenOption.WRITE, StandardOpenOption.CREATE, StandardOpenOption.CREATE_NEW,
            StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.SPARSE);

    private OpenOptions() {}

    /**
     * {@return the options as a set}
     *
     * @throws IllegalArgumentException for an option not supported, or CREATE, CREATE_NEW or TRUNCATE_EXISTING
     *         without WRITE
     */
    public static Set<StandardOpenOption> parse(OpenOption... options) {
        Set<StandardOpenOption> set = EnumSet.noneOf(StandardOpenOption.class);
        for (OpenOption option : options) {
            if (!(option instanceof StandardOpenOption) || !SUPPORTED.contains(option)) {
                throw new IllegalArgumentException("open option " + option + " is not supported"
                        + (option == StandardOpenOption.DSYNC || option == StandardOpenOption.SYNC
                        ? "; use CacheMode.WRITETHROUGH or DIRECTSYNC" : ""));
            }
            set.add((StandardOpenOption) option);
        }
        if (set.contains(StandardOpenOption.CREATE_NEW) || set.contains(StandardOpenOption.CREATE)
                || set.contains(StandardOpenOption.TRUNCATE_EXISTING)) {
            if (!set.contains(StandardOpenOption.WRITE)) {
                throw new IllegalArgumentException("CREATE, CREATE_NEW and TRUNCATE_EXISTING need WRITE");
            }
        }
        return set;
    }

    /** {@return the {@link FileDescriptors} open flags of the options} */
    public static int nativeFlags(Set<StandardOpenOption> options) {
        int flags = 0;
        // Read access is always asked for when writing: EVICT needs it to map the file for mincore.
        if (options.contains(StandardOpenOption.WRITE)) flags |= FileDescriptors.READ_WRITE;
        if (options.contains(StandardOpenOption.CREATE)) flags |= FileDescriptors.CREATE;
        if (options.contains(StandardOpenOption.CREATE_NEW)) flags |= FileDescriptors.CREATE | FileDescriptors.EXCLUSIVE;
        if (options.contains(StandardOpenOption.TRUNCATE_EXISTING)) flags |= FileDescriptors.TRUNCATE;
        return flags;
    }
}
