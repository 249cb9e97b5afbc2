/**
 * Files under a page-cache policy, and the page cache itself.
 *
 * <p>{@link io.pagewise.StorageFile} opens a file or block device for positional, thread-safe I/O under a
 * {@link io.pagewise.CacheMode}: buffered ({@code WRITEBACK}, {@code WRITETHROUGH}, {@code UNSAFE}), direct
 * ({@code DIRECT}, {@code DIRECTSYNC}), or buffered while leaving almost nothing cached ({@code EVICT},
 * {@code DONTCACHE}). {@link io.pagewise.AccessHint} passes {@code posix_fadvise} advice, and
 * {@link io.pagewise.PageCache} measures ({@code mincore}), evicts and loads whole files.
 *
 * <p>{@link io.pagewise.CacheMode} also says what each mode needs and does ({@code needsNative},
 * {@code isDirect}, {@code evictsBehind}, {@code prefetches}, {@code flushSyncs}, {@code syncsEveryWrite}). The modes
 * other than WRITEBACK, WRITETHROUGH and UNSAFE need the native library that the jar carries;
 * {@link io.pagewise.Native} tells whether it loaded.
 *
 * <p>The API keeps the JDK's conventions wherever a JDK type has set them ({@link io.pagewise.StorageFile} says
 * how): methods that read into or write from a {@code ByteBuffer} move its position by the bytes transferred, a
 * {@code read} returns -1 at the end of the file and a {@code readFully} throws {@link java.io.EOFException}, use
 * after close throws {@link java.nio.channels.ClosedChannelException}, and a failed system call is the JDK's
 * exception type where it has one ({@link java.nio.file.NoSuchFileException},
 * {@link java.nio.file.AccessDeniedException}, {@link java.nio.file.FileAlreadyExistsException}), else
 * {@link io.pagewise.system.NativeIOException}; each names the call, the path, the range and the errno, which
 * {@link io.pagewise.system.SystemCallFailure} gives as a value.
 */
package io.pagewise;
