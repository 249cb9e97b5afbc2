package io.pagewise.lucene;

/**
 * Lucene's I/O contexts, as {@link PagewiseDirectory}'s policy table tells them apart. Lucene 9 and 10 describe a
 * context differently ({@code IOContext} is a class with fields in 9, an interface with hints in 10); both come down
 * to one of these.
 */
public enum ContextKind {
    /** Searching and anything else Lucene opens without saying more (IOContext.DEFAULT, Lucene 9's READ). */
    DEFAULT,
    /** A file read once from start to end: checksum checks, segment infos, CheckIndex (IOContext.READONCE). */
    READ_ONCE,
    /** Reading the segments a merge combines, and writing the segment it makes. */
    MERGE,
    /** Writing a segment that indexing flushed from memory. */
    FLUSH
}
