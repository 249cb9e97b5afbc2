package io.pagewise.backends;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.ChangeTracker;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.nbd.client.BlockStatus;
import io.pagewise.nbd.client.ExportInfo;
import io.pagewise.nbd.client.NbdClient;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * An export of an NBD server as a device, through an {@link NbdClient}: the copier reads and writes one, and the
 * server serves one to proxy another server. Requests longer than the server's maximum payload are split (by the
 * client, into requests in flight at once); zeroing
 * without WRITE_ZEROES on the server writes zeros as data. The server's errors arrive as
 * {@link io.pagewise.nbd.NbdException}s, {@link DeviceException}s with the server's error.
 */
public final class NbdDevice implements BlockDevice {
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();
    /** Compact NBD request lengths are 32-bit: without extended headers longer ranges are sent in pieces of this. */
    private static final long MAX_RANGE = 1L << 30;
    /** The longest zero, trim or map request: MAX_RANGE with compact headers, any length with extended ones. */
    private final long maxRange;

    /** The prefix of qemu's dirty bitmap meta contexts. */
    private static final String DIRTY_BITMAP = "qemu:dirty-bitmap:";

    private final NbdClient client;
    private final ExportInfo info;
    private final Capabilities capabilities;

    /**
     * A device over a connected client; closing the device closes the client.
     *
     * @param client the connected client
     */
    public NbdDevice(NbdClient client) {
        this.client = client;
        this.info = client.info();
        this.maxRange = info.extendedHeaders() ? Long.MAX_VALUE : MAX_RANGE;
        this.capabilities = capabilities(info);
    }

    /**
     * Connects to an export.
     *
     * @param uri         the export's URI, as {@link NbdClient#connect(String, int)} takes it
     * @param connections how many connections to use at most (more than one only with multi-conn)
     * @return the device
     * @throws IOException when the server cannot be reached or the handshake fails
     */
    public static NbdDevice connect(String uri, int connections) throws IOException {
        return new NbdDevice(NbdClient.connect(uri, connections));
    }

    /**
     * Connects to an export and selects the dirty bitmap {@code qemu:dirty-bitmap:NAME} (as served by
     * {@code pagewise serve --bitmap=NAME} or {@code qemu-nbd -B NAME}), which {@link #dirtyBitmap} then reads.
     *
     * @param uri         the export's URI, as {@link NbdClient#connect(String, int)} takes it
     * @param connections how many connections to use at most (more than one only with multi-conn)
     * @param bitmap      the bitmap's NAME
     * @return the device
     * @throws IOException when the server cannot be reached, the handshake fails, or the server does not offer the
     *                     bitmap
     */
    public static NbdDevice connect(String uri, int connections, String bitmap) throws IOException {
        return new NbdDevice(NbdClient.connect(io.pagewise.nbd.NbdUri.parse(uri), connections,
                List.of(DIRTY_BITMAP + bitmap)));
    }

    /**
     * {@return the server's dirty bitmap NAME as a change tracker}: its runs come from BLOCK_STATUS for
     * {@code qemu:dirty-bitmap:NAME}, hole meaning unchanged
     *
     * @param name the bitmap's NAME, selected when the client connected
     * @throws IllegalArgumentException when the client did not select that bitmap
     */
    public ChangeTracker dirtyBitmap(String name) {
        String context = DIRTY_BITMAP + name;
        if (!client.metaContexts().contains(context)) {
            throw new IllegalArgumentException(name() + ": the dirty bitmap " + name + " was not selected at connect");
        }
        return new ChangeTracker() {
            @Override
            public String bitmapName() { return name; }

            @Override
            public List<Extent> changedRuns(long offset, long length, int maxRuns) throws IOException {
                long asked = Math.min(length, maxRange);
                List<Extent> runs = new ArrayList<>();
                for (BlockStatus b : client.blockStatus(context, offset, asked)) {
                    long start = Math.max(b.offset(), offset);
                    long end = Math.min(b.end(), offset + asked);
                    if (end <= start) continue;
                    boolean unchanged = (b.flags() & 1) == 0;
                    Extent last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
                    if (last != null && last.hole() == unchanged && last.end() == start) {
                        runs.set(runs.size() - 1, new Extent(last.offset(), end - last.offset(), unchanged));
                    } else {
                        if (runs.size() == maxRuns) break;
                        runs.add(new Extent(start, end - start, unchanged));
                    }
                }
                // Nothing said about offset: changed, the answer that never misses a block.
                return runs.isEmpty() ? List.of(new Extent(offset, asked, false)) : runs;
            }
        };
    }

    /** {@return the client this device uses} */
    public NbdClient client() { return client; }

    @Override
    public String name() { return client.uri().text(); }

    @Override
    public long size() { return info.size(); }

    /** {@link NbdClient#readFully}: requests of at most the server's maximum payload, all in flight at once. */
    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        client.readFully(dst, offset);
    }

    /** {@link NbdClient#write(ByteBuffer, long, boolean)}: split as the reads are. */
    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        client.write(src, offset, fua);
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        if (info.canZero()) {
            for (long at = offset, end = offset + length; at < end; ) {
                long n = Math.min(end - at, maxRange);
                client.zero(at, n, flags);
                at += n;
            }
            return;
        }
        if (flags.contains(ZeroFlag.FAST)) {
            throw new DeviceException(DeviceException.ENOTSUP, name() + " takes no WRITE_ZEROES: zeroing would not be fast");
        }
        for (long at = offset, end = offset + length; at < end; ) {
            int n = (int) Math.min(ZEROES.capacity(), Math.min(end - at, info.maximumPayload()));
            client.write(ZEROES.duplicate().limit(n), at, false);
            at += n;
        }
        if (flags.contains(ZeroFlag.FUA)) client.flush();
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        for (long at = offset, end = offset + length; at < end; ) {
            long n = Math.min(end - at, maxRange);
            client.trim(at, n);
            at += n;
        }
        if (fua) client.flush();
    }

    @Override
    public void flush() throws IOException {
        client.flush();
    }

    /** One BLOCK_STATUS of at most 1 GiB (of any length with extended headers), clipped to the range asked for. */
    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        long asked = Math.min(length, maxRange);
        List<Extent> clipped = new ArrayList<>();
        for (Extent e : client.extents(offset, asked)) {
            long start = Math.max(e.offset(), offset);
            long end = Math.min(e.end(), offset + asked);
            if (end > start) clipped.add(new Extent(start, end - start, e.hole()));
            if (clipped.size() == maxExtents) break;
        }
        return clipped.isEmpty() ? List.of(new Extent(offset, asked, false)) : clipped;
    }

    /**
     * What the server's transmission flags and metadata contexts offer. Zeroing also without WRITE_ZEROES on the
     * server, by writing zeros, but fast only with it.
     */
    private static Capabilities capabilities(ExportInfo info) {
        boolean writable = !info.isReadOnly();
        return Capabilities.NONE
                .with(Capability.WRITE, writable)
                .with(Capability.FLUSH, info.canFlush())
                .with(Capability.FUA, info.canFua())
                .with(Capability.TRIM, info.canTrim())
                .with(Capability.ZERO, writable)
                .with(Capability.FAST_ZERO, info.canZero() && info.canFastZero())
                .with(Capability.EXTENTS, info.canExtents())
                .with(Capability.HOLES, info.canExtents())
                .with(Capability.MULTI_CONN, info.canMultiConn());
    }

    @Override
    public Capabilities capabilities() { return capabilities; }

    @Override
    public int minimumBlockSize() { return info.minimumBlock(); }

    @Override
    public int preferredBlockSize() { return info.preferredBlock(); }

    @Override
    public int maximumBlockSize() { return info.maximumPayload(); }

    @Override
    public void close() throws IOException {
        client.close();
    }

    /**
     * The URI and the connections in use, with why there is only one when the server forbids more, and whether they
     * have extended headers.
     */
    @Override
    public String toString() {
        return name() + " (" + client.connectionCount() + (client.connectionCount() == 1 ? " connection" : " connections")
                + (info.canMultiConn() ? "" : ", no multi-conn") + (info.extendedHeaders() ? ", extended headers" : "")
                + ")";
    }
}
