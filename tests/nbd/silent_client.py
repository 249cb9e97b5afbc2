# A client that connects, reads the server's greeting and then says nothing: the server must hang up on it (exits 0
# when it did, 9 when it sent more instead). Needs $unixsocket.
import os, socket, sys

s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(os.environ["unixsocket"])
assert len(s.recv(18, socket.MSG_WAITALL)) == 18
sys.exit(0 if s.recv(1) == b"" else 9)
