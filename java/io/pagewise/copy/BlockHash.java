package io.pagewise.copy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The blkhash construction, the checksum of a disk image that {@code blksum} and {@code nbdcopy --blkhash} compute:
 * the image is cut into blocks (64 KiB by default, the last one possibly shorter), each block is hashed on its own,
 * and the result is the hash of the block digests in order followed by the image's length as a 64-bit little-endian
 * number. A block of zeros always has the same digest, so a hole is hashed without being read, and the blocks can
 * be hashed by many threads at once.
 *
 * <p>{@link #accumulator(long)} collects an image's blocks in any order, from many threads;
 * {@link Checksums#of(io.pagewise.device.BlockDevice, BlockHash, int)} reads a device into one.
 *
 * @param algorithm the digest, by its OpenSSL name as blksum takes it ({@code sha256}, {@code sha512}, {@code sha1},
 *                  {@code sha3-256}, {@code md5} …) or its JDK name ({@code SHA-256})
 * @param blockSize the block size in bytes, a positive even number (blksum's {@code --block-size}, default 64 KiB)
 */
public record BlockHash(String algorithm, int blockSize) {
    /** The block size blksum and nbdcopy use unless told otherwise. */
    public static final int DEFAULT_BLOCK_SIZE = 64 << 10;

    /** OpenSSL's names that differ from the JDK's. */
    private static final Map<String, String> JDK_NAMES = Map.ofEntries(
            Map.entry("sha1", "SHA-1"), Map.entry("sha224", "SHA-224"), Map.entry("sha256", "SHA-256"),
            Map.entry("sha384", "SHA-384"), Map.entry("sha512", "SHA-512"), Map.entry("sha512-224", "SHA-512/224"),
            Map.entry("sha512-256", "SHA-512/256"), Map.entry("sha3-224", "SHA3-224"), Map.entry("sha3-256", "SHA3-256"),
            Map.entry("sha3-384", "SHA3-384"), Map.entry("sha3-512", "SHA3-512"), Map.entry("md5", "MD5"));

    /**
     * Checks the algorithm and the block size.
     *
     * @param algorithm the digest's OpenSSL or JDK name
     * @param blockSize the block size in bytes
     * @throws IllegalArgumentException when this JDK has no such digest, or the block size is not a positive even
     *                                  number
     */
    public BlockHash {
        Objects.requireNonNull(algorithm, "algorithm");
        if (blockSize <= 0 || blockSize % 2 != 0) {
            throw new IllegalArgumentException("block size " + blockSize + ": expected a positive even number of bytes");
        }
        newDigest(algorithm);
    }

    /** {@return SHA-256 over 64 KiB blocks: blksum's and nbdcopy's default} */
    public static BlockHash sha256() {
        return new BlockHash("sha256", DEFAULT_BLOCK_SIZE);
    }

    /**
     * {@return an empty accumulator for an image of size bytes}
     *
     * @param size the image's length in bytes
     */
    public Accumulator accumulator(long size) {
        return new Accumulator(this, size);
    }

    /**
     * {@return the digest of size bytes of zeros} without hashing them: what a hole of that size hashes to
     *
     * @param size how many zeros
     */
    public byte[] ofZeros(long size) {
        Accumulator zeros = accumulator(size);
        zeros.zero(0, size);
        return zeros.finish();
    }

    /** {@return a new MessageDigest of this algorithm} */
    MessageDigest newDigest() {
        return newDigest(algorithm);
    }

    /** {@return the digest of one whole block of zeros} */
    byte[] zeroBlockDigest() {
        MessageDigest digest = newDigest();
        ByteBuffer zeros = ByteBuffer.allocate(Math.min(blockSize, 1 << 20));
        for (long left = blockSize; left > 0; left -= zeros.capacity()) {
            digest.update(zeros.clear().limit((int) Math.min(zeros.capacity(), left)));
        }
        return digest.digest();
    }

    /** {@return the length field that ends the outer hash: the image size, 64-bit little-endian} */
    static byte[] lengthField(long size) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(size).array();
    }

    private static MessageDigest newDigest(String algorithm) {
        String name = JDK_NAMES.getOrDefault(algorithm.toLowerCase(Locale.ROOT), algorithm);
        try {
            return MessageDigest.getInstance(name);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalArgumentException("unknown digest '" + algorithm + "': expected one of "
                    + String.join(", ", new java.util.TreeSet<>(JDK_NAMES.keySet())) + ", or a JDK digest name", e);
        }
    }

    /**
     * {@return the digest as lower-case hexadecimal, as blksum prints it}
     *
     * @param digest the digest's bytes
     */
    public static String hex(byte[] digest) {
        StringBuilder text = new StringBuilder(digest.length * 2);
        for (byte b : digest) text.append(Character.forDigit((b >> 4) & 15, 16)).append(Character.forDigit(b & 15, 16));
        return text.toString();
    }
}
