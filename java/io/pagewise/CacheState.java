package io.pagewise;

/**
 * The page-cache state of a file, as Linux's cachestat(2) reports it (Linux 6.5 and later), in pages of
 * {@link #pageSize()} bytes.
 *
 * @param cached          pages of the file in the page cache
 * @param dirty           cached pages written to and not yet written back
 * @param writeback       pages being written back now
 * @param evicted         pages evicted from the cache since the file's pages were first cached (as far as the
 *                        kernel's shadow entries still tell)
 * @param recentlyEvicted evicted pages that would still be cached had the cache been a little larger: the file's
 *                        working set that did not fit
 * @param pageSize        the page size in bytes
 */
public record CacheState(long cached, long dirty, long writeback, long evicted, long recentlyEvicted, int pageSize) {}
