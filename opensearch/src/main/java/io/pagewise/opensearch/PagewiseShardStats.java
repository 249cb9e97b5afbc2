package io.pagewise.opensearch;

import io.pagewise.lucene.ContextKind;
import io.pagewise.lucene.FileTypeCache;
import io.pagewise.lucene.FileTypeIo;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * One shard copy's PagewiseDirectory on one node: bytes read, written and memory-mapped per file type and I/O
 * context since the shard opened, and what the page cache holds of each file type now (empty when residency cannot
 * be measured: without the native library).
 */
public record PagewiseShardStats(String index, int shard, boolean primary, List<FileTypeIo> io, List<FileTypeCache> cached,
                                 boolean residencyMeasured) implements Writeable, ToXContentObject {

    /** Reads what {@link #writeTo} wrote. */
    public static PagewiseShardStats readFrom(StreamInput in) throws IOException {
        String index = in.readString();
        int shard = in.readVInt();
        boolean primary = in.readBoolean();
        int ios = in.readVInt();
        List<FileTypeIo> io = new ArrayList<>(ios);
        for (int i = 0; i < ios; i++) {
            io.add(new FileTypeIo(in.readString(), in.readEnum(ContextKind.class), in.readVLong(), in.readVLong(), in.readVLong()));
        }
        int caches = in.readVInt();
        List<FileTypeCache> cached = new ArrayList<>(caches);
        for (int i = 0; i < caches; i++) {
            cached.add(new FileTypeCache(in.readString(), in.readVInt(), in.readVLong(), in.readVLong(), in.readVLong()));
        }
        return new PagewiseShardStats(index, shard, primary, io, cached, in.readBoolean());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(index);
        out.writeVInt(shard);
        out.writeBoolean(primary);
        out.writeVInt(io.size());
        for (FileTypeIo each : io) {
            out.writeString(each.fileType());
            out.writeEnum(each.kind());
            out.writeVLong(each.bytesRead());
            out.writeVLong(each.bytesWritten());
            out.writeVLong(each.bytesMapped());
        }
        out.writeVInt(cached.size());
        for (FileTypeCache each : cached) {
            out.writeString(each.fileType());
            out.writeVInt(each.files());
            out.writeVLong(each.bytes());
            out.writeVLong(each.cachedBytes());
            out.writeVLong(each.dirtyBytes());
        }
        out.writeBoolean(residencyMeasured);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        builder.field("shard", shard);
        builder.field("primary", primary);
        builder.field("residency_measured", residencyMeasured);
        Map<String, FileTypeCache> cacheByType = new TreeMap<>();
        for (FileTypeCache each : cached) cacheByType.put(each.fileType(), each);
        Map<String, List<FileTypeIo>> ioByType = new TreeMap<>();
        for (FileTypeIo each : io) ioByType.computeIfAbsent(each.fileType(), t -> new ArrayList<>()).add(each);
        TreeMap<String, Boolean> types = new TreeMap<>();
        cacheByType.keySet().forEach(t -> types.put(t, true));
        ioByType.keySet().forEach(t -> types.put(t, true));
        builder.startObject("file_types");
        for (String type : types.keySet()) {
            // segments_N has no extension: its type is "", shown as "segments".
            builder.startObject(type.isEmpty() ? "segments" : type);
            FileTypeCache cache = cacheByType.get(type);
            if (cache != null) {
                builder.field("files", cache.files());
                builder.field("size_in_bytes", cache.bytes());
                builder.field("cached_in_bytes", cache.cachedBytes());
                builder.field("dirty_in_bytes", cache.dirtyBytes());
            }
            builder.startObject("io");
            for (FileTypeIo each : ioByType.getOrDefault(type, List.of())) {
                builder.startObject(each.kind().name().toLowerCase(Locale.ROOT));
                builder.field("read_in_bytes", each.bytesRead());
                builder.field("written_in_bytes", each.bytesWritten());
                builder.field("mapped_in_bytes", each.bytesMapped());
                builder.endObject();
            }
            builder.endObject();
            builder.endObject();
        }
        builder.endObject();
        return builder.endObject();
    }
}
