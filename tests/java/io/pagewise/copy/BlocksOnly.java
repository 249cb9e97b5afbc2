package io.pagewise.copy;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A device that takes only whole blocks for writes and zeroes, as an NBD server with a minimum block size
 * (nbdkit's blocksize-policy filter with blocksize-error-policy=error), and says so in its minimum block size. A
 * device whose size is no multiple of the block takes its short last block, as such a server does.
 */
final class BlocksOnly extends FilterDevice {
    private final int block;

    BlocksOnly(BlockDevice device, int block) {
        super(device);
        this.block = block;
    }

    @Override
    public int minimumBlockSize() { return block; }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        aligned("write", offset, src.remaining());
        super.write(src, offset, fua);
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        aligned("zero", offset, length);
        super.zero(offset, length, flags);
    }

    private void aligned(String what, long offset, long length) throws IOException {
        if (offset % block != 0 || (length % block != 0 && offset + length != size())) {
            throw new IOException("unaligned " + what + " at " + offset + " (+" + length + ")");
        }
    }
}
