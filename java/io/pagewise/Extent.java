package io.pagewise;

/**
 * A run of a file that holds data or is a hole (reads as zeros, takes no space).
 *
 * @param offset where the run starts, in bytes from the start of the file
 * @param length the run's length in bytes
 * @param hole   true when the run reads as zeros
 */
public record Extent(long offset, long length, boolean hole) {
    /** {@return the offset just past the run: offset + length} */
    public long end() {
        return offset + length;
    }
}
