package io.pagewise.opensearch;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.lucene.ContextKind;
import io.pagewise.lucene.FilePolicy;
import io.pagewise.lucene.PagewiseDirectory;
import io.pagewise.lucene.PolicyTable;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.unit.ByteSizeUnit;
import org.opensearch.core.common.unit.ByteSizeValue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The index settings {@code index.store.pagewise.*}: PagewiseDirectory's policy table, one mode, hint and
 * neighbours rule per I/O context, and its merge read window. Each defaults to PolicyTable's default; they are read
 * when a shard's directory opens, so they are fixed at index creation (or changed on a closed index).
 */
public final class PagewiseIndexSettings {
    static final String PREFIX = "index.store.pagewise.";

    /** The merge read window; 0 turns it off. */
    public static final Setting<ByteSizeValue> MERGE_READ_WINDOW = Setting.byteSizeSetting(PREFIX + "merge_read_window",
            new ByteSizeValue(PagewiseDirectory.DEFAULT_MERGE_READ_WINDOW, ByteSizeUnit.BYTES),
            new ByteSizeValue(0, ByteSizeUnit.BYTES), new ByteSizeValue(1, ByteSizeUnit.GB),
            Property.IndexScope, Property.Final);

    /** Whether merges and flushes write their full buffers on the io_uring ring without waiting for each. */
    public static final Setting<Boolean> ASYNC_WRITES = Setting.boolSetting(PREFIX + "async_writes", true,
            Property.IndexScope, Property.Final);

    private static final Map<ContextKind, Setting<CacheMode>> MODES = new EnumMap<>(ContextKind.class);
    private static final Map<ContextKind, Setting<AccessHint>> HINTS = new EnumMap<>(ContextKind.class);
    private static final Map<ContextKind, Setting<Boolean>> NEIGHBOURS = new EnumMap<>(ContextKind.class);

    static {
        PolicyTable defaults = PolicyTable.defaults();
        for (ContextKind kind : ContextKind.values()) {
            FilePolicy policy = defaults.policy(kind);
            String key = PREFIX + kind.name().toLowerCase(Locale.ROOT);
            MODES.put(kind, new Setting<>(key + ".mode", lower(policy.mode()), s -> parse(CacheMode.class, key + ".mode", s),
                    Property.IndexScope));
            HINTS.put(kind, new Setting<>(key + ".hint", lower(policy.hint()), s -> parse(AccessHint.class, key + ".hint", s),
                    Property.IndexScope));
            NEIGHBOURS.put(kind, Setting.boolSetting(key + ".follow_neighbours", policy.followsNeighbours(),
                    Property.IndexScope));
        }
    }

    private PagewiseIndexSettings() {}

    /** {@return every index setting of the plugin} */
    public static List<Setting<?>> all() {
        List<Setting<?>> all = new ArrayList<>();
        all.add(MERGE_READ_WINDOW);
        all.add(ASYNC_WRITES);
        for (ContextKind kind : ContextKind.values()) {
            all.add(MODES.get(kind));
            all.add(HINTS.get(kind));
            all.add(NEIGHBOURS.get(kind));
        }
        return all;
    }

    /** {@return the setting of a context's cache mode} */
    public static Setting<CacheMode> mode(ContextKind kind) {
        return MODES.get(kind);
    }

    /** {@return the setting of a context's access hint} */
    public static Setting<AccessHint> hint(ContextKind kind) {
        return HINTS.get(kind);
    }

    /** {@return the setting of whether a context's new files follow their neighbours} */
    public static Setting<Boolean> followNeighbours(ContextKind kind) {
        return NEIGHBOURS.get(kind);
    }

    /** {@return the policy table an index's settings describe} */
    public static PolicyTable policies(Settings settings) {
        PolicyTable.Builder table = PolicyTable.builder();
        for (ContextKind kind : ContextKind.values()) {
            CacheMode mode = MODES.get(kind).get(settings);
            AccessHint hint = HINTS.get(kind).get(settings);
            table.policy(kind, NEIGHBOURS.get(kind).get(settings) ? FilePolicy.followingNeighbours(mode, hint)
                    : FilePolicy.of(mode, hint));
        }
        return table.build();
    }

    private static String lower(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    private static <E extends Enum<E>> E parse(Class<E> type, String key, String value) {
        try {
            return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            List<String> known = new ArrayList<>();
            for (E constant : type.getEnumConstants()) known.add(lower(constant));
            throw new IllegalArgumentException("[" + key + "] is '" + value + "': expected one of " + known, e);
        }
    }
}
