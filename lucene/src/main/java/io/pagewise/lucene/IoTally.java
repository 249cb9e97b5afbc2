package io.pagewise.lucene;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** The directory's counters: bytes read, written and mapped, per file type and I/O context. */
final class IoTally {
    private static final int READ = 0;
    private static final int WRITTEN = 1;
    private static final int MAPPED = 2;
    private static final int PER_KIND = 3;
    private final ConcurrentHashMap<String, LongAdder[]> byType = new ConcurrentHashMap<>();

    /** The counters of one file type in one context, for an input or output to add to without a lookup. */
    final class Counter {
        private final LongAdder[] adders;
        private final int base;

        private Counter(String fileType, ContextKind kind) {
            this.adders = byType.computeIfAbsent(fileType, type -> {
                LongAdder[] fresh = new LongAdder[ContextKind.values().length * PER_KIND];
                for (int i = 0; i < fresh.length; i++) fresh[i] = new LongAdder();
                return fresh;
            });
            this.base = kind.ordinal() * PER_KIND;
        }

        void read(long bytes) { adders[base + READ].add(bytes); }

        void written(long bytes) { adders[base + WRITTEN].add(bytes); }

        void mapped(long bytes) { adders[base + MAPPED].add(bytes); }
    }

    Counter counter(String fileType, ContextKind kind) {
        return new Counter(fileType, kind);
    }

    /** {@return every file type and context that moved a byte, by file type then context} */
    List<FileTypeIo> snapshot() {
        List<FileTypeIo> rows = new ArrayList<>();
        Map<String, LongAdder[]> sorted = new TreeMap<>(byType);
        sorted.forEach((type, adders) -> {
            for (ContextKind kind : ContextKind.values()) {
                int base = kind.ordinal() * PER_KIND;
                long read = adders[base + READ].sum();
                long written = adders[base + WRITTEN].sum();
                long mapped = adders[base + MAPPED].sum();
                if (read != 0 || written != 0 || mapped != 0) {
                    rows.add(new FileTypeIo(type, kind, read, written, mapped));
                }
            }
        });
        return rows;
    }
}
