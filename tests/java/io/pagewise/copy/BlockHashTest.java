package io.pagewise.copy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The blkhash construction against a plain reading of its definition (digest of each block, then of the digests and
 * the length), however the bytes arrive: in pieces that cut blocks, out of order, from many threads, as zero ranges.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockHashTest {
    private static final int BLOCK = 4096;
    private static final BlockHash HASH = new BlockHash("sha256", BLOCK);

    /** The definition, read plainly: one block after another, the last one possibly short, then the length. */
    static byte[] reference(byte[] image, int block, String jdkName) throws Exception {
        MessageDigest outer = MessageDigest.getInstance(jdkName);
        for (int at = 0; at < image.length; at += block) {
            MessageDigest inner = MessageDigest.getInstance(jdkName);
            inner.update(image, at, Math.min(block, image.length - at));
            outer.update(inner.digest());
        }
        outer.update(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(image.length).array());
        return outer.digest();
    }

    /** Random bytes with whole zero blocks and zero runs that cut blocks. */
    private static byte[] image(int size, long seed) {
        Random random = new Random(seed);
        byte[] image = new byte[size];
        random.nextBytes(image);
        for (int i = 0; i < 8 && size > 0; i++) {
            int from = random.nextInt(size);
            int length = Math.min(size - from, random.nextInt(5 * BLOCK));
            java.util.Arrays.fill(image, from, from + length, (byte) 0);
        }
        return image;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3, BLOCK - 1, BLOCK, BLOCK + 1, 64 * BLOCK, 64 * BLOCK + 777, 200_003})
    void piecesInAnyOrderFromManyThreadsGiveTheDefinitionsDigest(int size) throws Exception {
        byte[] image = image(size, size);
        Random random = new Random(size + 1L);
        // Pieces of random lengths that mostly cut blocks; some are given as zero ranges when they are all zeros.
        List<int[]> pieces = new ArrayList<>();
        for (int at = 0; at < size; ) {
            int length = Math.min(size - at, 1 + random.nextInt(3 * BLOCK));
            pieces.add(new int[] {at, length});
            at += length;
        }
        Collections.shuffle(pieces, random);
        Accumulator sum = HASH.accumulator(size);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int[] piece : pieces) {
                done.add(pool.submit(() -> {
                    boolean zeros = true;
                    for (int i = piece[0]; i < piece[0] + piece[1]; i++) zeros &= image[i] == 0;
                    if (zeros) {
                        sum.zero(piece[0], piece[1]);
                    } else {
                        ByteBuffer data = ByteBuffer.wrap(image, piece[0], piece[1]).slice();
                        sum.data(piece[0], data);
                        assertEquals(0, data.position(), "data() leaves the position alone");
                    }
                }));
            }
            for (Future<?> f : done) f.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertArrayEquals(reference(image, BLOCK, "SHA-256"), sum.finish());
        assertArrayEquals(sum.finish(), sum.finish(), "finish() again gives the same digest");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 5, BLOCK, 10L * BLOCK + 100, 3L << 20})
    void zerosAreHashedAsTheirBytesWould(long size) throws Exception {
        assertArrayEquals(reference(new byte[(int) size], BLOCK, "SHA-256"), HASH.ofZeros(size));
        // Zero ranges whose edges cut blocks, around one data byte.
        if (size < 3 * BLOCK) return;
        byte[] image = new byte[(int) size];
        image[BLOCK + 10] = 7;
        Accumulator sum = HASH.accumulator(size);
        sum.zero(BLOCK + 11, size - BLOCK - 11);
        sum.data(BLOCK + 10, ByteBuffer.wrap(new byte[] {7}));
        sum.zero(0, BLOCK + 10);
        assertArrayEquals(reference(image, BLOCK, "SHA-256"), sum.finish());
    }

    @Test
    void otherDigestsAndBlockSizesByTheirOpensslNames() throws Exception {
        byte[] image = image(100_000, 9);
        for (String[] names : new String[][] {{"sha1", "SHA-1"}, {"sha512", "SHA-512"}, {"md5", "MD5"},
                {"sha3-256", "SHA3-256"}, {"SHA-384", "SHA-384"}}) {
            BlockHash hash = new BlockHash(names[0], 1024);
            Accumulator sum = hash.accumulator(image.length);
            sum.data(0, ByteBuffer.wrap(image));
            assertArrayEquals(reference(image, 1024, names[1]), sum.finish(), names[0]);
        }
    }

    @Test
    void mistakesAreNamed() {
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> new BlockHash("blake3", BLOCK));
        assertTrue(unknown.getMessage().contains("unknown digest 'blake3'"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new BlockHash("sha256", 0));
        assertThrows(IllegalArgumentException.class, () -> new BlockHash("sha256", 4095));

        Accumulator sum = HASH.accumulator(3L * BLOCK);
        IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
                () -> sum.data(3L * BLOCK - 1, ByteBuffer.allocate(2)));
        assertTrue(outside.getMessage().contains("outside the image of 12288 bytes"), outside.getMessage());
        sum.data(0, ByteBuffer.allocate(BLOCK));
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> sum.zero(0, BLOCK));
        assertTrue(twice.getMessage().contains("block 0 (offset 0) was given twice"), twice.getMessage());
        sum.zero(2L * BLOCK, BLOCK);
        IllegalStateException missing = assertThrows(IllegalStateException.class, sum::finish);
        assertTrue(missing.getMessage().contains("from offset 4096 were not all given"), missing.getMessage());
    }

    @Test
    void hexIsLowerCaseTwoDigitsAByte() {
        assertEquals("00ff7f10", BlockHash.hex(new byte[] {0, (byte) 0xff, 0x7f, 0x10}));
    }
}
