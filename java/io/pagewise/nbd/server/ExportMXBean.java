package io.pagewise.nbd.server;

/**
 * One export of a server through JMX ({@link NbdServerMXBean}), registered as
 * {@code io.pagewise:type=NbdServer,name=NAME,export=EXPORT} once the export is served. The page-cache values come
 * from one cachestat(2) of the export's file per read (Linux 6.5+), and are -1 where there is no file or no cachestat.
 */
public interface ExportMXBean {
    /** {@return the export's name} */
    String getName();

    /** {@return the export's size in bytes, -1 when the device cannot tell} */
    long getSizeBytes();

    /** {@return requests answered, every command, failed ones included} */
    long getRequests();

    /** {@return requests answered with an error} */
    long getErrors();

    /** {@return bytes read by successful READs} */
    long getReadBytes();

    /** {@return bytes written by successful WRITEs} */
    long getWrittenBytes();

    /** {@return bytes of the export's file in the page cache} */
    long getCachedBytes();

    /** {@return bytes of the file's cached pages not yet written back} */
    long getDirtyBytes();

    /** {@return bytes of the file's pages being written back now} */
    long getWritebackBytes();

    /** {@return bytes of the file's pages evicted from the page cache, as far as the kernel still tells} */
    long getEvictedBytes();

    /** {@return bytes of the file's pages evicted recently: its working set that did not fit} */
    long getRecentlyEvictedBytes();
}
