package io.pagewise.filters;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A bandwidth limit on the bytes read and written, in total and for each connection, as nbdkit's rate filter. Here
 * in <b>bytes</b> per second; by name ({@code rate:rate=80M}, {@link Filters}) in bits per second, as nbdkit's
 * {@code rate=}, so that {@code rate=80M} is 10 MiB/s in both. Each limit is a token bucket that starts full and holds
 * {@code burstiness} seconds' worth, so a transfer of N bytes at a limit of R bytes per second takes at least
 * (N − R × burstiness) / R seconds. A request waits before it reaches the device; zeroes, trims, flushes and block
 * status are not limited (they move no data), as in nbdkit.
 *
 * <p>The per-connection limit needs to know connections: the NBD server calls {@link #forConnection()} once per
 * client connection, and each connection gets a bucket of its own, all of them sharing the total one. Calls made on
 * the filter itself, from Java, count as one connection of their own.
 */
public final class RateFilter extends FilterDevice {
    /** How many seconds' worth a bucket holds unless told: 2, as nbdkit's {@code burstiness}. */
    public static final double DEFAULT_BURSTINESS = 2.0;

    private final TokenBucket total;
    private final TokenBucket connection;
    private final long connectionRate;
    private final double burstiness;

    /**
     * A limit over a device.
     *
     * @param device         the device to limit
     * @param rate           the bytes per second of all connections together, or 0 for no total limit
     * @param connectionRate the bytes per second of each connection, or 0 for no limit per connection
     * @param burstiness     how many seconds' worth of bytes a bucket holds, more than 0
     * @throws IllegalArgumentException when a rate is negative or burstiness is not more than 0
     */
    public RateFilter(BlockDevice device, long rate, long connectionRate, double burstiness) {
        this(device, bucket(rate, burstiness, "rate"), connectionRate, burstiness);
    }

    private RateFilter(BlockDevice device, TokenBucket total, long connectionRate, double burstiness) {
        super(device);
        if (!(burstiness > 0) || Double.isInfinite(burstiness)) {
            throw new IllegalArgumentException("filter rate: burstiness=" + burstiness + ": must be more than 0");
        }
        this.total = total;
        this.connectionRate = connectionRate;
        this.burstiness = burstiness;
        this.connection = bucket(connectionRate, burstiness, "connection-rate");
    }

    private static TokenBucket bucket(long rate, double burstiness, String key) {
        if (rate < 0) throw new IllegalArgumentException("filter rate: " + key + "=" + rate + ": must be 0 or more");
        return rate == 0 ? null : new TokenBucket(rate, burstiness);
    }

    /** A view with a bucket of its own for one connection, sharing the total bucket. */
    @Override
    public BlockDevice forConnection() throws IOException {
        BlockDevice view = device.forConnection();
        if (connectionRate == 0 && view == device) return this;
        return new RateFilter(view, total, connectionRate, burstiness);
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        take(dst.remaining());
        device.readFully(dst, offset);
    }

    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        take(remaining(dsts));
        device.readFully(dsts, offset);
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        take(src.remaining());
        device.write(src, offset, fua);
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        take(remaining(srcs));
        device.write(srcs, offset, fua);
    }

    /** The connection's own limit first, then the total one, so that a slow connection holds no total bytes. */
    private void take(long n) throws IOException {
        if (connection != null) connection.take(n);
        if (total != null) total.take(n);
    }

    private static long remaining(ByteBuffer[] buffers) {
        long n = 0;
        for (ByteBuffer b : buffers) n += b.remaining();
        return n;
    }

    /** {@return the limit of all connections together in bytes per second, or 0 for none} */
    public long totalBytesPerSecond() {
        return total == null ? 0 : total.bytesPerSecond();
    }

    /** {@return the limit of each connection in bytes per second, or 0 for none} */
    public long connectionBytesPerSecond() {
        return connectionRate;
    }

    @Override
    public String toString() { return device + " (rate-limited)"; }
}
