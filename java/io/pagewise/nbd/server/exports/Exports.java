package io.pagewise.nbd.server.exports;

import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.ExportSource;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a server serves: the exports added by name, then those of its {@link ExportSource}s, and the default export a
 * client that asks for "" gets when no export is named "". Remembers every entry it handed out, so that the server can
 * flush them at the end and report on them.
 */
public final class Exports {
    private final Map<String, ExportEntry> fixed;
    private final List<ExportSource> sources;
    private final String defaultName;
    /** Whether every export offers the meta context qemu:allocation-depth. */
    private final boolean allocationDepth;
    /** Every entry handed out, by identity: a source may hand out a new one when a file was replaced. */
    private final Set<ExportEntry> handedOut = ConcurrentHashMap.newKeySet();
    /**
     * Each name's export as last handed out, in the order first handed out; a file replaced under --dir's name
     * replaces its entry here (guarded by itself).
     */
    private final Map<String, ExportEntry> served = new LinkedHashMap<>();
    /** Told of each entry the first time it is handed out (the JMX beans); null for none. */
    private volatile java.util.function.Consumer<ExportEntry> firstServed;

    public Exports(Map<String, ExportEntry> fixed, List<ExportSource> sources, String defaultName,
                   boolean allocationDepth) {
        this.allocationDepth = allocationDepth;
        this.fixed = new LinkedHashMap<>(fixed);
        this.sources = List.copyOf(sources);
        this.defaultName = defaultName;
        for (ExportEntry entry : this.fixed.values()) {
            handedOut.add(entry);
            served.put(entry.name(), entry);
        }
    }

    /** Only the exports of a map, without sources or default (tests and fuzzing drive the handshake so). */
    public static Exports of(Map<String, ExportEntry> fixed) {
        return new Exports(fixed, List.of(), null, false);
    }

    /** {@return whether every export offers qemu:allocation-depth} */
    public boolean allocationDepth() {
        return allocationDepth;
    }

    /** {@return the export a client asking for name gets, or null when there is none} */
    public ExportEntry find(String name) throws IOException {
        ExportEntry entry = lookUp(name);
        if (entry == null && name.isEmpty() && defaultName != null) entry = lookUp(defaultName);
        if (entry != null && handedOut.add(entry)) {
            synchronized (served) {
                served.put(entry.name(), entry);
            }
            java.util.function.Consumer<ExportEntry> hook = firstServed;
            if (hook != null) hook.accept(entry);
        }
        return entry;
    }

    /** A client handed entry by {@link #find} has gone; its source may close a device nobody uses any more. */
    public void release(ExportEntry entry) {
        if (fixed.get(entry.name()) == entry) return;
        for (ExportSource source : sources) source.released(entry);
    }

    /**
     * Calls hook now for every fixed export, and later for each export of a source when it is first handed out, or
     * handed out anew for a file replaced under its name.
     */
    public void onFirstServed(java.util.function.Consumer<ExportEntry> hook) {
        firstServed = hook;
        for (ExportEntry entry : served()) hook.accept(entry);
    }

    private ExportEntry lookUp(String name) throws IOException {
        ExportEntry entry = fixed.get(name);
        for (int i = 0; entry == null && i < sources.size(); i++) entry = sources.get(i).find(name);
        return entry;
    }

    /** {@return the exports clients can list now: the fixed ones, then each source's, each name once} */
    public List<ExportSource.Listing> list() throws IOException {
        Map<String, ExportSource.Listing> all = new LinkedHashMap<>();
        for (ExportEntry entry : fixed.values()) all.put(entry.name(), new ExportSource.Listing(entry.name(), entry.description()));
        for (ExportSource source : sources) {
            for (ExportSource.Listing listing : source.list()) all.putIfAbsent(listing.name(), listing);
        }
        return new ArrayList<>(all.values());
    }

    /** {@return the name of the export named first: the fixed one named "", else the default, else the first fixed} */
    public String firstName() {
        if (fixed.containsKey("")) return "";
        if (defaultName != null) return defaultName;
        return fixed.isEmpty() ? "" : fixed.keySet().iterator().next();
    }

    /** {@return every export handed out so far and every fixed one, each name once, as last handed out} */
    public Collection<ExportEntry> served() {
        synchronized (served) {
            return new ArrayList<>(served.values());
        }
    }

    /** {@return every entry handed out so far, also those of files replaced since: each is flushed at stop} */
    public Collection<ExportEntry> handedOut() {
        return new ArrayList<>(handedOut);
    }

    boolean isEmpty() {
        return fixed.isEmpty() && sources.isEmpty();
    }
}
