package io.pagewise.lucene;

/**
 * Bytes moved for one file type in one I/O context, since the directory was opened.
 *
 * @param fileType     the extension, without the dot ("" for none)
 * @param kind         the I/O context
 * @param bytesRead    bytes read through a StorageFile (reads that are not memory-mapped)
 * @param bytesWritten bytes written
 * @param bytesMapped  the length of the files memory-mapped for reading: what searches may read, not what they
 *                     did read, which only the page faults know
 */
public record FileTypeIo(String fileType, ContextKind kind, long bytesRead, long bytesWritten, long bytesMapped) {}
