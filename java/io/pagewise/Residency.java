package io.pagewise;

/**
 * How many pages of a file range are in the page cache.
 *
 * @param residentPages pages of the range that are in the page cache
 * @param totalPages    pages the range covers
 * @param pageSize      the system page size in bytes
 */
public record Residency(long residentPages, long totalPages, int pageSize) {
    /** {@return the resident share in percent, 0 for an empty range} */
    public double percent() {
        return totalPages == 0 ? 0 : 100.0 * residentPages / totalPages;
    }

    /** {@return the bytes of the resident pages: residentPages times pageSize} */
    public long residentBytes() {
        return residentPages * pageSize;
    }
}
