# 128 requests in flight on one connection, writes then reads, each verified. Needs $uri: a writable export of
# at least 1 MiB whose server answers none of a batch before all 128 have arrived (LibnbdProtocolTest makes one).
import os, nbd

N = 128
h = nbd.NBD()
h.connect_uri(os.environ["uri"])
pattern = [bytes([i]) * 8192 for i in range(N)]
bufs = [nbd.Buffer.from_bytearray(bytearray(p)) for p in pattern]
cookies = [h.aio_pwrite(bufs[i], i * 8192) for i in range(N)]
assert h.aio_in_flight() == N, h.aio_in_flight()
while h.aio_in_flight() > 0:
    h.poll(-1)
for c in cookies:
    assert h.aio_command_completed(c)
reads = [nbd.Buffer(8192) for _ in range(N)]
cookies = [h.aio_pread(reads[i], i * 8192) for i in range(N)]
assert h.aio_in_flight() == N, h.aio_in_flight()
while h.aio_in_flight() > 0:
    h.poll(-1)
for i in range(N):
    assert h.aio_command_completed(cookies[i])
    assert reads[i].to_bytearray() == pattern[i], i
h.shutdown()
print("in flight ok")
