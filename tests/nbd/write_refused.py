# A client's write to a read-only export: the export says it is read-only, and a write sent all the same (strict
# mode off, so that libnbd sends it) fails with EPERM. Exits 5 when the write went through. Needs $uri.
import errno, os, nbd

h = nbd.NBD()
h.connect_uri(os.environ["uri"])
assert h.is_read_only(), "the export is not advertised read-only"
h.set_strict_mode(0)
try:
    h.pwrite(b"x" * 4096, 0)
    raise SystemExit(5)
except nbd.Error as e:
    assert e.errno in (errno.EPERM, "EPERM"), e.errno
