# Zero-length requests of every command at $uri (a writable export of 1 MiB or more, base:allocation).
# libnbd refuses to send them unless told; the server must answer each one and stay usable.
import errno, os, nbd

h = nbd.NBD()
h.add_meta_context("base:allocation")
h.connect_uri(os.environ["uri"])
h.set_strict_mode(0)  # no client-side checks: zero sizes (and DIRECT's advertised alignment) reach the server
h.pwrite(b"before", 4096)

assert h.pread(0, 4096) == b""
h.pwrite(b"", 4096)
h.trim(0, 4096)
h.zero(0, 4096)
h.zero(0, 4096, nbd.CMD_FLAG_NO_HOLE)
if h.can_cache():  # not advertised where it would fill no cache (DIRECT, DONTCACHE)
    h.cache(0, 4096)

# Every BLOCK_STATUS descriptor MUST have a nonzero length, so a zero-length query is an error.
entries = []
try:
    h.block_status(0, 4096, lambda ctx, off, e, err: entries.extend(e))
    raise AssertionError("zero-length BLOCK_STATUS succeeded with %r" % entries)
except nbd.Error as e:
    assert e.errno in (errno.EINVAL, "EINVAL"), (e.errno, str(e))
assert not entries, entries

# Nothing above changed the data, and the connection still works.
assert h.pread(6, 4096) == b"before"
runs = []
h.block_status(4096, 4096, lambda ctx, off, e, err: runs.extend(e))
assert runs and runs[0] > 0, runs
h.shutdown()
print("zero-length ok")
