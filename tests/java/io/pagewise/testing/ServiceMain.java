package io.pagewise.testing;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServiceProcess;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A server run as a service would be, until the CLI has the options: {@code ServiceMain READY [--activated]
 * [--exit-with-parent] [--pidfile=FILE] [--user=USER] [--socket=PATH]} serves a 1 MiB memory disk on systemd's socket (with --activated) or on
 * PATH, writes its URI to READY once it listens, and stops at SIGTERM.
 */
public final class ServiceMain {
    private ServiceMain() {}

    public static void main(String[] args) throws Exception {
        Path ready = Path.of(args[0]);
        Path pidFile = null;
        String user = null;
        NbdServer.Builder builder = NbdServer.builder().export("", "service test disk", new MemoryDevice(1 << 20));
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--activated")) {
                ServerSocketChannel listening = ServiceProcess.systemdListener();
                if (listening == null) {
                    System.err.println("not socket-activated: LISTEN_PID=" + System.getenv("LISTEN_PID"));
                    System.exit(2);
                }
                builder.listen(listening);
            } else if (args[i].equals("--exit-with-parent")) {
                ServiceProcess.exitWithParent();
            } else if (args[i].startsWith("--user=")) {
                user = args[i].substring("--user=".length());
            } else if (args[i].startsWith("--pidfile=")) {
                pidFile = Path.of(args[i].substring("--pidfile=".length()));
            } else if (args[i].startsWith("--socket=")) {
                builder.unixSocket(Path.of(args[i].substring("--socket=".length())));
            } else {
                throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        NbdServer server = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }));
        if (pidFile != null) ServiceProcess.writePidFile(pidFile);
        Path partial = ready.resolveSibling(ready.getFileName() + ".tmp");
        Files.writeString(partial, server.uri() + "\n");
        Files.move(partial, ready);
        if (user != null) ServiceProcess.dropPrivileges(user, null); // after binding, with every thread started
        server.awaitStopped();
    }
}
