package io.pagewise.lucene;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Lucene's I/O context × file type (extension) → {@link FilePolicy}. A cell set for an extension wins over the
 * context's policy for every file type.
 *
 * <table>
 * <caption>The defaults</caption>
 * <tr><th>context</th><th>policy</th><th>why</th></tr>
 * <tr><td>DEFAULT</td><td>WRITEBACK/NORMAL: memory-mapped reads, kept writes</td><td>searching wants the index in
 *     memory, and mmap is the fastest way to read it</td></tr>
 * <tr><td>READ_ONCE</td><td>EVICT/SEQUENTIAL</td><td>a checksum check reads a whole file once; what was cached
 *     before stays, nothing else does</td></tr>
 * <tr><td>MERGE</td><td>EVICT/SEQUENTIAL, new files following their neighbours</td><td>merge reads keep nothing
 *     they brought in; the merged segment is cached only when the segments around it are</td></tr>
 * <tr><td>FLUSH</td><td>EVICT/SEQUENTIAL, new files following their neighbours</td><td>a flushed segment of an
 *     index that is searched (cached) stays cached; one of a bulk load nobody searches does not</td></tr>
 * </table>
 */
public final class PolicyTable {
    private final Map<ContextKind, FilePolicy> byContext;
    private final Map<ContextKind, Map<String, FilePolicy>> byContextAndType;

    private PolicyTable(Map<ContextKind, FilePolicy> byContext, Map<ContextKind, Map<String, FilePolicy>> byType) {
        this.byContext = byContext;
        this.byContextAndType = byType;
    }

    /** {@return the table every PagewiseDirectory starts from} */
    public static PolicyTable defaults() {
        return builder().build();
    }

    /** {@return a builder that starts from the defaults} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@return the policy for a file type in a context}
     *
     * @param kind     the I/O context
     * @param fileType the file's extension, without the dot; "" for none (segments_N)
     */
    public FilePolicy policy(ContextKind kind, String fileType) {
        FilePolicy cell = byContextAndType.get(kind).get(fileType);
        return cell != null ? cell : byContext.get(kind);
    }

    /**
     * {@return the policy a context uses for the file types it names no cell for}
     *
     * @param kind the I/O context
     */
    public FilePolicy policy(ContextKind kind) {
        return byContext.get(kind);
    }

    /** {@return the cells set for single file types, per context} */
    public Map<ContextKind, Map<String, FilePolicy>> cells() {
        return byContextAndType;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        for (ContextKind kind : ContextKind.values()) {
            if (text.length() > 0) text.append(", ");
            text.append(kind).append('=').append(byContext.get(kind));
            byContextAndType.get(kind).forEach((type, p) -> text.append(", ").append(kind).append('.').append(type)
                    .append('=').append(p));
        }
        return text.toString();
    }

    /** Sets cells of a table, starting from the defaults. */
    public static final class Builder {
        private final Map<ContextKind, FilePolicy> byContext = new EnumMap<>(ContextKind.class);
        private final Map<ContextKind, Map<String, FilePolicy>> byType = new EnumMap<>(ContextKind.class);

        private Builder() {
            byContext.put(ContextKind.DEFAULT, FilePolicy.of(CacheMode.WRITEBACK, AccessHint.NORMAL));
            byContext.put(ContextKind.READ_ONCE, FilePolicy.of(CacheMode.EVICT, AccessHint.SEQUENTIAL));
            byContext.put(ContextKind.MERGE, FilePolicy.followingNeighbours(CacheMode.EVICT, AccessHint.SEQUENTIAL));
            byContext.put(ContextKind.FLUSH, FilePolicy.followingNeighbours(CacheMode.EVICT, AccessHint.SEQUENTIAL));
            for (ContextKind kind : ContextKind.values()) byType.put(kind, new LinkedHashMap<>());
        }

        /**
         * Sets the policy of a context for every file type without a cell of its own.
         *
         * @param kind   the I/O context
         * @param policy its policy
         * @return this builder
         */
        public Builder policy(ContextKind kind, FilePolicy policy) {
            byContext.put(Objects.requireNonNull(kind, "kind"), Objects.requireNonNull(policy, "policy"));
            return this;
        }

        /**
         * Sets the policy of one file type in a context.
         *
         * @param kind     the I/O context
         * @param fileType the extension, without the dot ("vec", "cfs"); "" for files without one (segments_N)
         * @param policy   its policy
         * @return this builder
         * @throws IllegalArgumentException when fileType holds a dot or a path separator
         */
        public Builder policy(ContextKind kind, String fileType, FilePolicy policy) {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(fileType, "fileType");
            Objects.requireNonNull(policy, "policy");
            if (fileType.contains(".") || fileType.contains("/")) {
                throw new IllegalArgumentException("file type '" + fileType + "' must be an extension without the dot,"
                        + " such as vec or cfs");
            }
            byType.get(kind).put(fileType.toLowerCase(Locale.ROOT), policy);
            return this;
        }

        /** {@return the table} */
        public PolicyTable build() {
            Map<ContextKind, Map<String, FilePolicy>> cells = new EnumMap<>(ContextKind.class);
            byType.forEach((kind, types) -> cells.put(kind, Map.copyOf(types)));
            return new PolicyTable(Map.copyOf(byContext), Map.copyOf(cells));
        }
    }
}
