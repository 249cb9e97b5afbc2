package io.pagewise.lucene;

/**
 * What the page cache holds now of one file type in a directory.
 *
 * @param fileType    the extension, without the dot ("" for none)
 * @param files       how many files of the type the directory holds
 * @param bytes       their size
 * @param cachedBytes how much of them is in the page cache
 * @param dirtyBytes  how much of that is not yet written back; 0 where the kernel lacks cachestat (before 6.5),
 *                    whose residency is read with mincore
 */
public record FileTypeCache(String fileType, int files, long bytes, long cachedBytes, long dirtyBytes) {
    /** {@return cachedBytes as a percentage of bytes; 0 for empty files} */
    public double percentCached() {
        return bytes == 0 ? 0 : 100.0 * cachedBytes / bytes;
    }
}
