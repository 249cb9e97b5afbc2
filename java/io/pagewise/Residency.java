package io.pagewise;

/** How many pages of a file range are in the page cache. */
public record Residency(long residentPages, long totalPages, int pageSize) {
    /** Resident share in percent, 0 for an empty range. */
    public double percent() {
        return totalPages == 0 ? 0 : 100.0 * residentPages / totalPages;
    }

    public long residentBytes() {
        return residentPages * pageSize;
    }
}
