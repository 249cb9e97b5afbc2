package io.pagewise.nbd.server.metrics;

import io.pagewise.CacheState;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.nbd.NbdCommand;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.ExportMXBean;
import io.pagewise.nbd.server.ExportStats;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.NbdServerMXBean;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.ToLongFunction;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/** Registers a server's MXBean and one per export served on the platform MBean server, and removes them at close. */
public final class ServerMBeans {
    private final MBeanServer platform = ManagementFactory.getPlatformMBeanServer();
    private final String quotedName;
    private final NbdServer server;
    private final System.Logger log;
    private final List<ObjectName> registered = new CopyOnWriteArrayList<>();

    public ServerMBeans(String name, NbdServer server, System.Logger log) {
        this.quotedName = ObjectName.quote(name);
        this.server = server;
        this.log = log;
    }

    /** Registers the server's bean; a name taken already fails the start, naming it. */
    public void registerServer() throws IOException {
        try {
            register(new ObjectName("io.pagewise:type=NbdServer,name=" + quotedName), new ServerBean());
        } catch (JMException e) {
            throw new IOException("cannot register the JMX bean io.pagewise:type=NbdServer,name=" + quotedName + ": " + e, e);
        }
    }

    /** Registers an export's bean when it is first served; a failure is logged, the export still served. */
    public synchronized void exportServed(ExportEntry entry) {
        try {
            ObjectName name = new ObjectName("io.pagewise:type=NbdServer,name=" + quotedName + ",export="
                    + ObjectName.quote(entry.name()));
            // A file replaced under its name (--dir) is a new entry: its bean takes the old one's place.
            if (registered.remove(name)) platform.unregisterMBean(name);
            register(name, new ExportBean(entry));
        } catch (JMException e) {
            log.log(Level.WARNING, "cannot register the JMX bean of export '" + entry.name() + "': " + e);
        }
    }

    public void unregisterAll() {
        for (ObjectName name : registered) {
            try {
                platform.unregisterMBean(name);
            } catch (JMException e) {
                // gone already
            }
        }
        registered.clear();
    }

    private void register(ObjectName name, Object bean) throws JMException {
        platform.registerMBean(bean, name);
        registered.add(name);
    }

    private final class ServerBean implements NbdServerMXBean {
        @Override public String getUri() { return server.uri(); }

        @Override public long getConnectionsAccepted() { return server.stats().connections(); }

        @Override public int getConnectionsOpen() { return server.connectionCount(); }

        @Override public int getConnectionsTransmitting() { return server.transmittingCount(); }

        @Override public long getHandshakes() { return server.stats().handshakes(); }

        @Override public long getAccessRefusals() { return server.stats().accessRefusals(); }

        @Override public long getRejectedConnections() { return server.stats().rejectedConnections(); }

        @Override public long getProtocolErrors() { return server.stats().protocolErrors(); }

        @Override public int getRequestsInFlight() { return server.stats().requestsInFlight(); }

        @Override public long getInflightBytes() { return server.stats().inflightBytesInUse(); }

        @Override public String[] getExports() { return server.exports().stream().map(ExportEntry::name).toArray(String[]::new); }
    }

    private final class ExportBean implements ExportMXBean {
        private final ExportEntry entry;

        ExportBean(ExportEntry entry) { this.entry = entry; }

        private long count(ToLongFunction<ExportStats> what) {
            ExportStats stats = server.stats().export(entry.name());
            return stats == null ? 0 : what.applyAsLong(stats);
        }

        private long cache(ToLongFunction<CacheState> what) {
            if (entry.file() == null || !Native.isAvailable()) return -1;
            try {
                Optional<CacheState> state = PageCache.cacheState(entry.file());
                return state.map(s -> what.applyAsLong(s) * s.pageSize()).orElse(-1L);
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }

        @Override public String getName() { return entry.name(); }

        @Override public long getSizeBytes() {
            try {
                return entry.device().size();
            } catch (IOException e) {
                return -1;
            }
        }

        @Override public long getRequests() {
            return count(s -> {
                long total = 0;
                for (NbdCommand c : NbdCommand.values()) total += s.ops(c);
                return total;
            });
        }

        @Override public long getErrors() {
            return count(s -> {
                long total = 0;
                for (NbdCommand c : NbdCommand.values()) total += s.errors(c);
                return total;
            });
        }

        @Override public long getReadBytes() { return count(s -> s.bytes(NbdCommand.READ)); }

        @Override public long getWrittenBytes() { return count(s -> s.bytes(NbdCommand.WRITE)); }

        @Override public long getCachedBytes() { return cache(CacheState::cached); }

        @Override public long getDirtyBytes() { return cache(CacheState::dirty); }

        @Override public long getWritebackBytes() { return cache(CacheState::writeback); }

        @Override public long getEvictedBytes() { return cache(CacheState::evicted); }

        @Override public long getRecentlyEvictedBytes() { return cache(CacheState::recentlyEvicted); }
    }
}
