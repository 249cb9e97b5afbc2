# Every handshake option through libnbd's opt mode. Needs $uri: export "" (64 MiB, writable, description
# "test disk") and an export named "second" (1 MiB).
import errno, os, nbd

uri = os.environ["uri"]

def handle():
    h = nbd.NBD()
    h.set_opt_mode(True)
    h.connect_uri(uri)
    return h

# LIST: both exports
h = handle()
names = []
h.opt_list(lambda name, description: names.append(name))
assert sorted(names) == ["", "second"], names

# INFO on the default export: size, flags, name, description, block sizes
h.set_export_name("")
h.set_full_info(True)
h.opt_info()
assert h.get_size() == 64 << 20, h.get_size()
assert not h.is_read_only()
assert h.can_flush() and h.can_fua() and h.can_trim() and h.can_zero() and h.can_fast_zero()
assert h.can_multi_conn() and h.can_cache() and h.can_df()
assert h.get_block_size(nbd.SIZE_MINIMUM) == 1
assert h.get_block_size(nbd.SIZE_PREFERRED) == 4096
assert h.get_block_size(nbd.SIZE_MAXIMUM) == 64 << 20
assert h.get_export_description() == "test disk", h.get_export_description()
assert h.get_canonical_export_name() == ""

# INFO on an unknown export: ERR_UNKNOWN, and the handshake goes on
h.set_export_name("no-such-export")
try:
    h.opt_info()
    raise AssertionError("opt_info on an unknown export succeeded")
except nbd.Error as e:
    assert e.errno in (errno.ENOENT, "ENOENT"), (str(e), e.errno)  # libnbd's mapping of ERR_UNKNOWN

# LIST_META_CONTEXT: base:allocation for no query, the wildcard and the name; nothing for another namespace
h.set_export_name("")
for queries in ([], ["base:"], ["base:allocation"]):
    h.clear_meta_contexts()
    for q in queries:
        h.add_meta_context(q)
    found = []
    h.opt_list_meta_context(lambda name: found.append(name))
    assert found == ["base:allocation"], (queries, found)
h.clear_meta_contexts()
h.add_meta_context("x-unknown:thing")
found = []
h.opt_list_meta_context(lambda name: found.append(name))
assert found == [], found

# ABORT ends the handshake politely
h.opt_abort()

# GO with base:allocation asked for (libnbd sends SET_META_CONTEXT first): the file export has it, the
# in-memory one does not offer it
for name, size, allocation in (("", 64 << 20, True), ("second", 1 << 20, False)):
    h = handle()
    h.add_meta_context("base:allocation")
    h.set_export_name(name)
    h.opt_go()
    assert h.can_meta_context("base:allocation") == allocation, name
    assert h.get_size() == size
    h.shutdown()

# GO on an unknown export fails with ERR_UNKNOWN; a second GO on a known one works
h = handle()
h.set_export_name("missing")
try:
    h.opt_go()
    raise AssertionError("opt_go on an unknown export succeeded")
except nbd.Error:
    pass
h.set_export_name("")
h.opt_go()
assert h.get_size() == 64 << 20
h.shutdown()

# GO without NO_ZEROES and without structured replies: simple replies from then on. (libnbd sends GO here, never
# EXPORT_NAME, to a server that knows GO; ExportNameReplyTest checks EXPORT_NAME's reply on a raw socket.)
h = nbd.NBD()
h.set_request_structured_replies(False)
h.set_handshake_flags(nbd.HANDSHAKE_FLAG_FIXED_NEWSTYLE)
h.set_opt_mode(True)
h.connect_uri(uri)
h.set_export_name("")
h.opt_go()
assert h.get_size() == 64 << 20
assert not h.get_structured_replies_negotiated()
assert h.pread(4, 0) == bytes(4)
h.shutdown()
print("options ok")
