package io.pagewise.device;

import io.pagewise.internal.Errno;
import io.pagewise.system.SystemCallFailure;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;

/**
 * A device's failure with the errno that says what kind it is, such as {@link #ENOSPC} for a full device: what a
 * {@link BlockDevice} throws when no more specific exception (a {@link SystemCallFailure}) applies. The NBD server
 * answers a request with the NBD error of the errno, the NBD client fails a request with an
 * {@code io.pagewise.nbd.NbdException}, a subclass, so a device that forwards to another NBD server passes the
 * error on.
 */
public class DeviceException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Operation not permitted, such as a write to a read-only device: 1. */
    public static final int EPERM = Errno.EPERM;
    /** Input/output error, the errno of any failure without a nearer one: 5. */
    public static final int EIO = Errno.EIO;
    /** Out of memory: 12. */
    public static final int ENOMEM = Errno.ENOMEM;
    /** Invalid argument, such as a range outside the device: 22. */
    public static final int EINVAL = Errno.EINVAL;
    /** No space left on the device: 28. */
    public static final int ENOSPC = Errno.ENOSPC;
    /** Value too large: 75. */
    public static final int EOVERFLOW = Errno.EOVERFLOW;
    /** Not supported, such as a fast zero that would not be fast: 95. */
    public static final int ENOTSUP = Errno.EOPNOTSUPP;
    /** The device is shutting down: 108. */
    public static final int ESHUTDOWN = Errno.ESHUTDOWN;

    /** The errno value. */
    private final int errno;

    /**
     * A failure with an errno and a message.
     *
     * @param errno   the errno value, such as {@link #ENOSPC}
     * @param message what went wrong
     */
    public DeviceException(int errno, String message) {
        super(message);
        this.errno = errno;
    }

    /**
     * A failure with an errno, a message and a cause.
     *
     * @param errno   the errno value, such as {@link #EIO}
     * @param message what went wrong
     * @param cause   what made it go wrong
     */
    public DeviceException(int errno, String message, Throwable cause) {
        super(message, cause);
        this.errno = errno;
    }

    /** {@return the errno value (Linux numbering), such as 28 for ENOSPC} */
    public int errno() { return errno; }

    /** {@return the errno's name, such as {@code ENOSPC}, or "errno N" for one without a name} */
    public String errnoName() { return errnoName(errno); }

    /**
     * {@return the name of an errno value, such as {@code ENOSPC}, or "errno N" for one without a name}
     *
     * @param errno the errno value
     */
    public static String errnoName(int errno) {
        String name = Errno.nbdName(errno);
        return name.startsWith("error ") ? Errno.name(errno) : name;
    }

    /**
     * {@return the errno that stands for a failure}: a DeviceException's own, a failed system call's, EPERM for any
     * other {@link AccessDeniedException}, ESHUTDOWN for a closed channel, EINVAL for an
     * {@link IllegalArgumentException}, ENOSPC for a message that says "No space left", else EIO
     *
     * @param failure what a device threw
     */
    public static int errnoOf(Throwable failure) {
        if (failure instanceof DeviceException) return ((DeviceException) failure).errno();
        if (failure instanceof SystemCallFailure) return ((SystemCallFailure) failure).errno();
        if (failure instanceof AccessDeniedException) return EPERM;
        if (failure instanceof ClosedChannelException) return ESHUTDOWN;
        if (failure instanceof IllegalArgumentException) return EINVAL;
        if (String.valueOf(failure.getMessage()).contains("No space left")) return ENOSPC;
        return EIO;
    }
}
