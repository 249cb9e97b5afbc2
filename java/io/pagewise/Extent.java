package io.pagewise;

/** A run of a file that holds data or is a hole (reads as zeros, takes no space). */
public record Extent(long offset, long length, boolean hole) {
    public long end() {
        return offset + length;
    }
}
