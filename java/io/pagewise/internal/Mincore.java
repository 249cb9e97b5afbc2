package io.pagewise.internal;

/** Pairs with {@code native/mincore.c}: page-cache residency of file ranges, mapped in bounded chunks. */
public final class Mincore {
    private Mincore() {}

    /** @return resident pages in the range (offset page aligned) or -errno */
    public static native long residentPages0(int fd, long offset, long length);

    /** Sets bit i (byte i/8, bit i%8) when page i of the range is resident; @return 0 or -errno */
    public static native int residentBitmap0(int fd, long offset, long length, byte[] out);

    public static native int pageSize0();
}
