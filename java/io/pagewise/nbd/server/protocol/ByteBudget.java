package io.pagewise.nbd.server.protocol;

/**
 * A cap on the payload bytes held by requests in flight (and the bounded list of runs a BLOCK_STATUS holds). A
 * connection's reader takes its share before reading a request's payload or buffering its reply, so a full budget
 * stops it reading its socket: back-pressure.
 */
public final class ByteBudget {
    private final long capacity;
    private long used;

    public ByteBudget(long capacity) {
        this.capacity = capacity;
    }

    /** Takes n bytes (at most the whole capacity, so one huge request cannot wait forever), blocking until free. */
    synchronized long acquire(long n) throws InterruptedException {
        long take = Math.min(n, capacity);
        while (used + take > capacity) wait();
        used += take;
        return take;
    }

    synchronized void release(long taken) {
        used -= taken;
        notifyAll();
    }

    /** Bytes taken and not yet released: 0 whenever no request is in flight. */
    public synchronized long used() {
        return used;
    }

    /** The most bytes that may be taken at once. */
    public long capacity() {
        return capacity;
    }
}
