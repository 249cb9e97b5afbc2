package io.pagewise.copy;

import io.pagewise.device.BlockDevice;

/**
 * How one copy runs, settled before it starts.
 *
 * @param source      what is copied
 * @param destination where it goes
 * @param requestSize the size of a read or write request
 * @param alignment   what every request's offset is a multiple of (both devices' minimum block sizes): data grows
 *                    and holes shrink to whole blocks, so that a device that takes whole blocks only takes every
 *                    request
 * @param tailStart   where the copy's last piece starts when it ends inside a block of a destination that takes whole
 *                    blocks only and goes on past the copy's end (-1 otherwise): that block is read back, overlaid and
 *                    written whole
 * @param tailEnd     where that piece is written up to: the end of the destination block it ends inside, or of the
 *                    destination (-1 when there is no such piece)
 * @param skipZeros   whether zero ranges are left alone, the destination reading as zeros already
 * @param sum         the checksum being computed, or null when the options ask for none
 */
record CopySetup(BlockDevice source, BlockDevice destination, int requestSize, int alignment, long tailStart,
        long tailEnd, boolean skipZeros, Accumulator sum) {}
