package io.pagewise.nbd.server;

import io.pagewise.Native;
import io.pagewise.internal.Errno;
import io.pagewise.internal.FileErrors;
import io.pagewise.internal.ProcessControl;
import java.io.IOException;
import java.nio.channels.Channel;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a server run as a service does to its own process, as nbdkit and qemu-nbd do: take over the listening socket
 * systemd passed ({@link #systemdListener()}), end with the process that started it ({@link #exitWithParent()}),
 * give up root after binding ({@link #dropPrivileges}). Linux only, and all but the first need the native library.
 */
public final class ServiceProcess {
    /** The first descriptor systemd passes (SD_LISTEN_FDS_START). */
    static final int FIRST_PASSED_FD = 3;

    private static Channel inherited;

    private ServiceProcess() {}

    /**
     * {@return the listening socket systemd passed by socket activation, or null when this process was not
     * socket-activated} Activated means {@code LISTEN_PID} is this process's id and {@code LISTEN_FDS} is set; the
     * socket is descriptor 3, TCP or Unix. Give it to {@link NbdServer.Builder#listen(ServerSocketChannel)}. The JDK
     * takes over an inherited socket only as descriptor 0, so the socket is moved there: standard input is replaced
     * by it (a service has none). Later calls return the same channel.
     *
     * @throws IOException when systemd passed more than one socket, or one that is not a listening stream socket
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static synchronized ServerSocketChannel systemdListener() throws IOException {
        if (inherited instanceof ServerSocketChannel) return (ServerSocketChannel) inherited;
        String pid = System.getenv("LISTEN_PID");
        String fds = System.getenv("LISTEN_FDS");
        if (pid == null || fds == null || !pid.trim().equals(Long.toString(ProcessHandle.current().pid()))) return null;
        if (!fds.trim().equals("1")) {
            throw new IOException("socket activation passed LISTEN_FDS=" + fds + " sockets; the server listens on exactly one");
        }
        requireNative("socket activation");
        int rc = ProcessControl.moveDescriptor(FIRST_PASSED_FD, 0);
        if (rc < 0) throw new IOException("cannot take over descriptor 3 from socket activation: " + Errno.description(-rc));
        inherited = System.inheritedChannel();
        if (!(inherited instanceof ServerSocketChannel)) {
            throw new IOException("descriptor 3 from socket activation is not a listening stream socket (got "
                    + (inherited == null ? "none" : inherited.getClass().getSimpleName()) + ")");
        }
        return (ServerSocketChannel) inherited;
    }

    /**
     * Writes this process's id and a newline to file, as nbdkit's and qemu-nbd's {@code --pidfile} do: call it once
     * the server listens, so that whoever waits for the file can connect at once. The file appears whole (written
     * beside it, then renamed), so a reader never sees it empty.
     *
     * @param file where to write the process id
     * @throws IOException naming the file when it cannot be written
     */
    public static void writePidFile(Path file) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path partial = absolute.resolveSibling("." + absolute.getFileName() + ".partial");
        try {
            Files.writeString(partial, ProcessHandle.current().pid() + "\n");
            Files.move(partial, absolute, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            Files.deleteIfExists(partial);
            // The partial file is written beside the pid file: a missing directory is its parent.
            String why = e instanceof java.nio.file.NoSuchFileException ? "no such directory " + absolute.getParent()
                    : Files.isDirectory(absolute) ? "it is a directory" : FileErrors.reason(e);
            throw new IOException("cannot write the pid file " + file + ": " + why, e);
        }
    }

    /**
     * Has the kernel send this process SIGTERM when the process that started it ends (PR_SET_PDEATHSIG), like
     * nbdkit's {@code --exit-with-parent}; the JVM then runs its shutdown hooks, where a server is closed.
     *
     * @throws IOException when the kernel refuses, or the parent has already ended
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static void exitWithParent() throws IOException {
        requireNative("exit with parent");
        ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
        int rc = ProcessControl.parentDeathSignal(ProcessControl.SIGTERM);
        if (rc < 0) throw new IOException("prctl(PR_SET_PDEATHSIG) failed: " + Errno.description(-rc));
        // The parent may have ended just before the call: then no signal will ever come.
        if (parent == null || !parent.isAlive()) throw new IOException("the parent process has already ended");
    }

    /**
     * Runs the whole process, every thread, as user (and group, or the user's own group when null) from now on:
     * call it after binding a privileged port or a socket in a root-owned directory, and after opening the exports.
     * Names are looked up in /etc/passwd and /etc/group; numbers are taken as they are.
     *
     * @param user  a user name or numeric uid
     * @param group a group name or numeric gid, or null for the user's primary group
     * @throws IllegalArgumentException naming a user or group that does not exist
     * @throws IOException when the system refuses (EPERM: not running as root)
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static void dropPrivileges(String user, String group) throws IOException {
        String[] account = lookUp(Path.of("/etc/passwd"), user, "user");
        int uid = Integer.parseInt(account[2]);
        int gid = group != null ? Integer.parseInt(lookUp(Path.of("/etc/group"), group, "group")[2])
                : Integer.parseInt(account[3]);
        requireNative("dropping privileges");
        int rc = ProcessControl.dropPrivileges(uid, gid);
        if (rc < 0) {
            throw new IOException("cannot run as uid " + uid + " gid " + gid + ": " + Errno.description(-rc)
                    + " (" + Errno.name(-rc) + ")");
        }
    }

    /** The fields of name's line (or of a line with that number) in an /etc file; a number not listed stands alone. */
    private static String[] lookUp(Path file, String name, String what) throws IOException {
        boolean numeric = !name.isEmpty() && name.chars().allMatch(Character::isDigit);
        List<String> lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
        for (String line : lines) {
            String[] fields = line.split(":", -1);
            if (fields.length < 4) continue;
            if (fields[0].equals(name) || (numeric && fields[2].equals(name))) return fields;
        }
        if (numeric && what.equals("group")) return new String[] {name, "", name};
        if (numeric) return new String[] {name, "", name, name};
        throw new IllegalArgumentException("no " + what + " named '" + name + "' in " + file);
    }

    private static void requireNative(String what) {
        if (!Native.isAvailable()) {
            throw new UnsupportedOperationException(what + " needs the pagewise native library: " + Native.loadError().getMessage());
        }
    }
}
