package io.pagewise.filters;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.DeviceException;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A filter that fails or delays some of the calls made to a device, to test how clients, the server and the copier
 * behave when storage fails: nbdkit's error filter (and its delay filter) as a wrapper.
 *
 * <pre>{@code
 * FaultFilter faulty = FaultFilter.wrap(FileDevice.open(path, CacheMode.WRITEBACK, READ, WRITE))
 *         .fail(0.10, DeviceException.EIO, DeviceException.ENOSPC)                 // 10 % of every operation
 *         .fail(FaultFilter.Operation.FLUSH, 0.5, DeviceException.EIO) // but half of the flushes
 *         .delay(FaultFilter.Operation.READ, Duration.ZERO, Duration.ofMillis(20))
 *         .seed(42)
 *         .build();
 * NbdServer server = NbdServer.builder().export("", faulty).unixSocket(socket).start();
 * }</pre>
 *
 * <p>Each call of an operation first waits its delay, if one is set (a fixed time, or one drawn uniformly between
 * a minimum and a maximum), and then fails with the operation's rate: it throws an {@link DeviceException} with one
 * of the operation's errors, drawn uniformly, whose message names the injection, for example
 * {@code injected ENOSPC, call #1234: WRITE at 65536 (+4096)}. The server answers the request with that error,
 * logs that message, and tells the client, with structured replies, only the operation, range and errno. <b>A call that fails does so before it reaches the wrapped device</b>, as
 * in nbdkit's filter: a failed WRITE, WRITE_ZEROES or TRIM changed nothing, and a failed READ left the buffers
 * untouched. Every other call, and every query ({@code can*}, {@link #size()}, block sizes), goes to the wrapped
 * device unchanged.
 *
 * <p>An operation is one kind of call, not one request: the server asks {@link Operation#BLOCK_STATUS} (the
 * device's {@link #extents}) also to find the holes of a READ on a sparse device, and when that call fails it
 * reads the range as data instead, so such an injection reaches no client. A READ of a range with holes, with
 * structured replies, reads each data run with a call of its own, so its fault names part of the range. A READ or WRITE longer than a
 * connection's share of the in-flight budget is served in parts, one call each, so a failure there may come after
 * earlier parts of the same WRITE were written.
 *
 * <p>Decisions are reproducible: the n-th call to the device gets the same delay and the same fault for the same
 * seed (calls made while active are numbered from 1 in the order they arrive, whatever their operation, so with
 * concurrent requests which request is the n-th depends on scheduling). {@link #injected}, {@link #delayed} and {@link #calls} count per operation, and
 * {@link Builder#recordInjections()} keeps a list of every injection so a test can match each failed request to
 * its fault. {@link #setActive(boolean)} turns faults and delays off and on while serving, as nbdkit's
 * {@code error-file} does. Thread-safe, as every device must be.
 */
public final class FaultFilter extends FilterDevice {
    /** The device calls a fault can be injected into, each with the NBD command that makes it. */
    public enum Operation {
        /** {@link BlockDevice#readFully}: NBD READ. */
        READ("READ"),
        /** {@link BlockDevice#write}: NBD WRITE. */
        WRITE("WRITE"),
        /** {@link BlockDevice#zero}: NBD WRITE_ZEROES. */
        ZERO("WRITE_ZEROES"),
        /** {@link BlockDevice#trim}: NBD TRIM. */
        TRIM("TRIM"),
        /** {@link BlockDevice#flush}: NBD FLUSH. */
        FLUSH("FLUSH"),
        /** {@link BlockDevice#extents}: NBD BLOCK_STATUS, and the server's look for holes in a READ. */
        BLOCK_STATUS("BLOCK_STATUS"),
        /** {@link BlockDevice#cache}: NBD CACHE. */
        CACHE("CACHE");

        private final String command;

        Operation(String command) {
            this.command = command;
        }

        /** {@return the NBD command whose requests make this call}, as {@code NbdException.command()} names it */
        public String command() { return command; }
    }

    /**
     * One injected fault, as recorded with {@link Builder#recordInjections()}.
     *
     * @param call      the number of the call to the device, from 1, as the error message says ({@code call #N})
     * @param operation the operation that failed
     * @param offset    the start of the call's range (0 for FLUSH)
     * @param length    the length of the call's range (0 for FLUSH)
     * @param error     the errno injected, such as {@link DeviceException#EIO}
     */
    public record Injection(long call, Operation operation, long offset, long length, int error) {}

    /** The errnos NBD can carry, so the ones that can be injected. */
    private static final int[] KNOWN_ERRORS = {DeviceException.EPERM, DeviceException.EIO, DeviceException.ENOMEM,
            DeviceException.EINVAL, DeviceException.ENOSPC, DeviceException.EOVERFLOW, DeviceException.ENOTSUP,
            DeviceException.ESHUTDOWN};
    private static final long GOLDEN = 0x9e3779b97f4a7c15L;

    /** What to do to the calls of one operation. */
    private record Plan(double rate, int[] errors, long minDelayNanos, long maxDelayNanos) {
        static final Plan NONE = new Plan(0, new int[] {DeviceException.EIO}, 0, 0);
    }

    private final Map<Operation, Plan> plans;
    private final long seed;
    private final ConcurrentLinkedQueue<Injection> recorded;
    private final AtomicLong callNumbers;
    private final Map<Operation, LongAdder> calls;
    private final Map<Operation, LongAdder> delayed;
    private final Map<Operation, LongAdder[]> injected;
    private final AtomicBoolean active;

    private FaultFilter(Builder b) {
        super(b.device);
        this.plans = new EnumMap<>(b.plans);
        this.seed = b.seed;
        this.recorded = b.record ? new ConcurrentLinkedQueue<>() : null;
        this.callNumbers = new AtomicLong();
        this.calls = adders();
        this.delayed = adders();
        this.injected = new EnumMap<>(Operation.class);
        this.active = new AtomicBoolean(true);
        for (Operation op : Operation.values()) {
            LongAdder[] perError = new LongAdder[KNOWN_ERRORS.length];
            for (int i = 0; i < perError.length; i++) perError[i] = new LongAdder();
            injected.put(op, perError);
        }
    }

    /** The same filter (plans, call numbers, counters, switch) over a per-connection view of its device. */
    private FaultFilter(FaultFilter shared, BlockDevice view) {
        super(view);
        this.plans = shared.plans;
        this.seed = shared.seed;
        this.recorded = shared.recorded;
        this.callNumbers = shared.callNumbers;
        this.calls = shared.calls;
        this.delayed = shared.delayed;
        this.injected = shared.injected;
        this.active = shared.active;
    }

    @Override
    protected BlockDevice over(BlockDevice view) { return new FaultFilter(this, view); }

    /**
     * Starts the settings for a filter over a device; with none, the filter only forwards.
     *
     * @param device the device to forward to
     * @return a builder to add faults and delays to
     */
    public static Builder wrap(BlockDevice device) {
        return new Builder(device);
    }

    /** Settings for a {@link FaultFilter}; the later setting for an operation replaces the earlier one. */
    public static final class Builder {
        private final BlockDevice device;
            private final Map<Operation, Plan> plans = new EnumMap<>(Operation.class);
        private long seed = System.nanoTime();
        private boolean record;

        private Builder(BlockDevice device) {
            if (device == null) throw new NullPointerException("device");
            this.device = device;
            for (Operation op : Operation.values()) plans.put(op, Plan.NONE);
        }

        /**
         * Fails this share of the calls of every operation (keeping each one's delay).
         *
         * @param rate   the share of calls to fail, from 0 (none) to 1 (all)
         * @param errors the errnos to fail with, each call drawing one uniformly; EIO when none is given
         * @return this builder
         * @throws IllegalArgumentException when rate is outside 0..1 or an error is not one of {@link DeviceException}'s
         */
        public Builder fail(double rate, int... errors) {
            for (Operation op : Operation.values()) fail(op, rate, errors);
            return this;
        }

        /**
         * Fails this share of the calls of one operation (keeping its delay).
         *
         * @param operation the operation
         * @param rate      the share of its calls to fail, from 0 (none) to 1 (all)
         * @param errors    the errnos to fail with, each call drawing one uniformly; EIO when none is given
         * @return this builder
         * @throws IllegalArgumentException when rate is outside 0..1 or an error is not one of {@link DeviceException}'s
         */
        public Builder fail(Operation operation, double rate, int... errors) {
            if (!(rate >= 0 && rate <= 1)) throw new IllegalArgumentException("fault rate must be from 0 to 1: " + rate);
            int[] chosen = errors.length == 0 ? new int[] {DeviceException.EIO} : errors.clone();
            for (int error : chosen) {
                if (errorIndex(error) < 0) {
                    throw new IllegalArgumentException("not an errno NBD can carry: " + error
                            + " (use the constants of DeviceException)");
                }
            }
            Plan old = plans.get(operation);
            plans.put(operation, new Plan(rate, chosen, old.minDelayNanos, old.maxDelayNanos));
            return this;
        }

        /**
         * Delays every call of every operation, by min when min equals max, else by a time drawn uniformly between
         * them.
         *
         * @param min the shortest delay
         * @param max the longest delay
         * @return this builder
         * @throws IllegalArgumentException when min is negative or longer than max
         */
        public Builder delay(Duration min, Duration max) {
            for (Operation op : Operation.values()) delay(op, min, max);
            return this;
        }

        /**
         * Delays every call of one operation, by min when min equals max, else by a time drawn uniformly between
         * them. The delay comes before the fault decision, so failed calls are delayed too.
         *
         * @param operation the operation
         * @param min       the shortest delay
         * @param max       the longest delay
         * @return this builder
         * @throws IllegalArgumentException when min is negative or longer than max
         */
        public Builder delay(Operation operation, Duration min, Duration max) {
            if (min.isNegative() || min.compareTo(max) > 0) {
                throw new IllegalArgumentException("delay must be from min to max, min at least 0: " + min + ", " + max);
            }
            Plan old = plans.get(operation);
            plans.put(operation, new Plan(old.rate, old.errors, min.toNanos(), max.toNanos()));
            return this;
        }

        /**
         * Sets the seed of the decisions, so that a run can be repeated (default: the clock at build time).
         *
         * @param seed any value
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Keeps every injection in a list for {@link FaultFilter#injections()}; off by default, since
         * the list grows with each one.
         *
         * @return this builder
         */
        public Builder recordInjections() {
            this.record = true;
            return this;
        }

        /** {@return the wrapper} */
        public FaultFilter build() {
            return new FaultFilter(this);
        }
    }

    /** {@return the seed of the decisions}, to repeat a run with {@link Builder#seed} */
    public long seed() { return seed; }

    /**
     * Turns faults and delays on (the initial state) or off; while off every call is only forwarded.
     *
     * @param active true to inject, false to only forward
     */
    public void setActive(boolean active) { this.active.set(active); }

    /** {@return true while faults and delays are injected} */
    public boolean isActive() { return active.get(); }

    /**
     * {@return the calls of an operation so far, failed or not}
     *
     * @param operation the operation
     */
    public long calls(Operation operation) { return calls.get(operation).sum(); }

    /**
     * {@return the faults injected into an operation so far}
     *
     * @param operation the operation
     */
    public long injected(Operation operation) {
        long n = 0;
        for (LongAdder count : injected.get(operation)) n += count.sum();
        return n;
    }

    /**
     * {@return the faults with this error injected into an operation so far}
     *
     * @param operation the operation
     * @param error     an errno, such as {@link DeviceException#ENOSPC}
     */
    public long injected(Operation operation, int error) {
        int i = errorIndex(error);
        return i < 0 ? 0 : injected.get(operation)[i].sum();
    }

    /**
     * {@return the calls of an operation that were delayed so far}
     *
     * @param operation the operation
     */
    public long delayed(Operation operation) { return delayed.get(operation).sum(); }

    /**
     * {@return every injection so far, in no particular order}; empty unless {@link Builder#recordInjections()} was
     * set
     */
    public List<Injection> injections() {
        return recorded == null ? List.of() : new ArrayList<>(recorded);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#READ}.
     */
    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        maybeFail(Operation.READ, offset, dst.remaining());
        device.readFully(dst, offset);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#READ}, once for the whole vector.
     */
    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        maybeFail(Operation.READ, offset, remaining(dsts));
        device.readFully(dsts, offset);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#WRITE}, once for the whole vector.
     */
    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        maybeFail(Operation.WRITE, offset, remaining(srcs));
        device.write(srcs, offset, fua);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#WRITE}.
     */
    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        maybeFail(Operation.WRITE, offset, src.remaining());
        device.write(src, offset, fua);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#FLUSH}.
     */
    @Override
    public void flush() throws IOException {
        maybeFail(Operation.FLUSH, 0, 0);
        device.flush();
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#TRIM}.
     */
    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        maybeFail(Operation.TRIM, offset, length);
        device.trim(offset, length, fua);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#ZERO}.
     */
    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        maybeFail(Operation.ZERO, offset, length);
        device.zero(offset, length, flags);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#BLOCK_STATUS}.
     */
    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        maybeFail(Operation.BLOCK_STATUS, offset, length);
        return device.extents(offset, length, maxExtents);
    }

    /**
     * {@inheritDoc} Injected into as {@link Operation#CACHE}.
     */
    @Override
    public void cache(long offset, long length) throws IOException {
        maybeFail(Operation.CACHE, offset, length);
        device.cache(offset, length);
    }

    @Override
    public String toString() {
        return "faults injected into " + device;
    }

    /** Waits the operation's delay, then throws its fault if this call draws one; before the wrapped device is called. */
    private void maybeFail(Operation op, long offset, long length) throws IOException {
        calls.get(op).increment();
        if (!active.get()) return;
        long call = callNumbers.incrementAndGet();
        Plan plan = plans.get(op);
        // Three independent draws per call number, so that call n decides the same way whatever came before it.
        long base = seed + 3 * call * GOLDEN;
        if (plan.maxDelayNanos > 0) {
            long span = plan.maxDelayNanos - plan.minDelayNanos;
            long nanos = plan.minDelayNanos + (long) (uniform(base + GOLDEN) * span);
            delayed.get(op).increment();
            sleep(nanos);
        }
        if (uniform(base + 2 * GOLDEN) >= plan.rate) return;
        int error = plan.errors[(int) (uniform(base + 3 * GOLDEN) * plan.errors.length)];
        injected.get(op)[errorIndex(error)].increment();
        if (recorded != null) recorded.add(new Injection(call, op, offset, length, error));
        throw new DeviceException(error, "injected " + DeviceException.errnoName(error) + ", call #" + call + ": "
                + op.command() + " at " + offset + " (+" + length + ")");
    }

    private static void sleep(long nanos) throws InterruptedIOException {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted during an injected delay");
        }
    }

    /** A double in [0, 1) from a 64-bit value, through SplitMix64's finalizer so that nearby inputs look unrelated. */
    private static double uniform(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        z = z ^ (z >>> 31);
        return (z >>> 11) * 0x1.0p-53;
    }

    private static int errorIndex(int error) {
        for (int i = 0; i < KNOWN_ERRORS.length; i++) {
            if (KNOWN_ERRORS[i] == error) return i;
        }
        return -1;
    }

    private static long remaining(ByteBuffer[] buffers) {
        long n = 0;
        for (ByteBuffer b : buffers) n += b.remaining();
        return n;
    }

    private static Map<Operation, LongAdder> adders() {
        Map<Operation, LongAdder> map = new EnumMap<>(Operation.class);
        for (Operation op : Operation.values()) map.put(op, new LongAdder());
        return map;
    }
}
