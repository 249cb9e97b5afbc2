# A client that reads once and then sends nothing for 3 s: with an idle timeout of 1 s its next read must fail,
# the connection closed by the server (exits 0 when it was, 9 when the read went through). Needs $uri.
import os, sys, time, nbd

h = nbd.NBD()
h.connect_uri(os.environ["uri"])
h.pread(512, 0)
time.sleep(3)
try:
    h.pread(512, 0)
except nbd.Error:
    sys.exit(0)
sys.exit(9)
