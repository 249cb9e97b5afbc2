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
 * {@link io.pagewise.Native} tells whether it loaded. Failed system calls throw
 * {@link io.pagewise.NativeIOException}, naming the call, the path, the range and the errno.
 */
package io.pagewise;
