package io.pagewise.internal;

/** Pairs with {@code native/mincore.c}: page-cache residency of file ranges, mapped in bounded chunks. */
public final class Mincore {
    private Mincore() {}

    /** The system page size. */
    public static int pageSize() {
        return pageSize0();
    }

    /** @return resident pages in the range (offset page aligned) or -errno */
    static long residentPages(int fd, long offset, long length) {
        return residentPages0(fd, offset, length);
    }

    /** Sets bit i (byte i/8, bit i%8) of out when page i of the range is resident; @return 0 or -errno */
    static int residentBitmap(int fd, long offset, long length, byte[] out) {
        int page = pageSize();
        long pages = (length + page - 1) / page;
        if (out.length * 8L < pages) throw new IllegalArgumentException(out.length + " bytes cannot map " + pages + " pages");
        return residentBitmap0(fd, offset, length, out);
    }

    private static native long residentPages0(int fd, long offset, long length);

    private static native int residentBitmap0(int fd, long offset, long length, byte[] out);

    private static native int pageSize0();
}
