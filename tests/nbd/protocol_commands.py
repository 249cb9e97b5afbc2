# Every command and flag on a 64 MiB writable export at $uri, plus the errors libnbd can be made to send.
import errno, os, nbd

uri = os.environ["uri"]
MiB = 1 << 20
h = nbd.NBD()
h.add_meta_context("base:allocation")
h.connect_uri(uri)
size = h.get_size()
assert size == 64 * MiB
assert h.get_structured_replies_negotiated()

# The largest payload the server advertises (64 MiB: all of this export), both ways; then trimmed back to a hole
maximum = h.get_block_size(nbd.SIZE_MAXIMUM)
assert maximum == size, maximum
big = os.urandom(1 << 16) * (maximum >> 16)
h.pwrite(big, 0)
assert h.pread(maximum, 0) == big
h.trim(size, 0)

# WRITE, WRITE+FUA, READ back
h.pwrite(b"a" * 4096, 0)
h.pwrite(b"b" * 4096, 4096, nbd.CMD_FLAG_FUA)
assert h.pread(8192, 0) == b"a" * 4096 + b"b" * 4096
# unaligned, odd sizes
h.pwrite(b"xyz", 12345)
assert h.pread(5, 12344) == b"\0xyz\0"
# 32 MiB, the spec's smallest maximum, both ways
big = os.urandom(1 << 16) * 512
h.pwrite(big, 8 * MiB)
assert h.pread(len(big), 8 * MiB) == big

# FLUSH, CACHE
h.flush()
h.cache(MiB, 0)

# BLOCK_STATUS on a hole, then after a write, with and without REQ_ONE
def status(count, offset, flags=0):
    out = []
    def cb(metacontext, off, entries, err):
        assert metacontext == "base:allocation"
        out.extend(zip(entries[0::2], entries[1::2]))
    h.block_status(count, offset, cb, flags)
    return out

hole = status(MiB, 48 * MiB)
assert hole == [(MiB, 3)], hole
h.pwrite(b"d" * 4096, 48 * MiB + 65536)
runs = status(MiB, 48 * MiB)
assert runs[0] == (65536, 3) and runs[1][1] == 0 and sum(l for l, _ in runs) == MiB, runs
one = status(MiB, 48 * MiB, nbd.CMD_FLAG_REQ_ONE)
assert one == [(65536, 3)], one

# Structured READ: holes come as OFFSET_HOLE chunks; with DF, one data chunk
chunks = []
def chunk(buf, offset, status, err):
    chunks.append((offset, len(buf), status))
data = h.pread_structured(MiB, 48 * MiB, chunk)
assert data[65536:65536 + 4096] == b"d" * 4096 and data.count(0) == MiB - 4096
assert any(s == nbd.READ_HOLE for _, _, s in chunks), chunks
chunks.clear()
h.pread_structured(MiB, 48 * MiB, chunk, nbd.CMD_FLAG_DF)
assert chunks == [(48 * MiB, MiB, nbd.READ_DATA)], chunks

# TRIM and WRITE_ZEROES (punching, NO_HOLE, FAST_ZERO, FUA)
h.pwrite(b"t" * 65536, 16 * MiB)
h.trim(65536, 16 * MiB)
assert status(65536, 16 * MiB) == [(65536, 3)]
h.pwrite(b"z" * 65536, 20 * MiB)
h.zero(65536, 20 * MiB)
assert h.pread(65536, 20 * MiB) == bytes(65536)
h.pwrite(b"z" * 65536, 20 * MiB)
h.zero(65536, 20 * MiB, nbd.CMD_FLAG_NO_HOLE | nbd.CMD_FLAG_FUA)
assert h.pread(65536, 20 * MiB) == bytes(65536)
h.pwrite(b"z" * 65536, 20 * MiB)
h.zero(65536, 20 * MiB, nbd.CMD_FLAG_FAST_ZERO)
assert h.pread(65536, 20 * MiB) == bytes(65536)
h.trim(4096, 30 * MiB, nbd.CMD_FLAG_FUA)

# Errors libnbd normally refuses to send: the connection stays usable after each
h.set_strict_mode(0)
def expect(err, fn, *args):
    try:
        fn(*args)
    except nbd.Error as e:
        assert e.errno in (err, errno.errorcode[err]), (fn.__name__, args, e.errno, str(e))
        return
    raise AssertionError("%s%r succeeded" % (fn.__name__, args))

expect(errno.EINVAL, h.pread, 4096, size - 2048)                   # read past the end
expect(errno.ENOSPC, h.pwrite, b"q" * 4096, size - 2048)           # write past the end (spec: ENOSPC)
expect(errno.EINVAL, h.trim, 4096, size)                           # trim past the end
expect(errno.ENOSPC, h.zero, 4096, size)                           # zero past the end (spec: ENOSPC)
expect(errno.EINVAL, h.block_status, 4096, size, lambda *a: 0)     # status past the end
expect(errno.EINVAL, h.pread, 4096, 0, nbd.CMD_FLAG_REQ_ONE)       # flag not valid for READ
expect(errno.EINVAL, h.pwrite, b"q", 0, nbd.CMD_FLAG_DF)           # flag not valid for WRITE
expect(errno.EINVAL, h.pread, 4096, 0, 1 << 7)                     # unknown flag
# Over the maximum (64 MiB) is more than libnbd sends at all: LargeRequestTest and BadInputTest send it raw.
assert h.pread(4096, 0) == b"a" * 4096
h.pwrite(b"still fine", 100)
assert h.pread(10, 100) == b"still fine"
h.flush()
h.shutdown()
print("commands ok")
