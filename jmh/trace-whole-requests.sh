#!/usr/bin/env bash
# Shows with strace that NBD requests reach the kernel whole: `pagewise serve --cache=MODE` (default dontcache)
# is traced while nbdcopy reads the cold file in 2 MiB requests and libnbd's Python binding sends sixteen 4 MiB
# FUA writes. Prints the pread/preadv/preadv2 and pwrite/pwritev/pwritev2 calls by flags and size, the writes
# submitted by io_submit (DIRECT) with their flags and bytes, and the fdatasync/fsync calls made on the served file
# before the server is stopped (the one a server makes at shutdown is not counted).
#
# Usage: jmh/trace-whole-requests.sh [-m MODE] [-s SIZE (default 256M)] [-d DIR (default /var/tmp)]
# Needs: strace, nbdcopy, python3 with the nbd module (python3-libnbd), a built jar (mvn -q package -DskipTests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/servers.sh
source "$root/jmh/servers.sh"
mode=dontcache size=256M dir=/var/tmp
parse_options m=mode s=size d=dir -- "$@"
require_tools strace:strace nbdcopy:libnbd-bin vmtouch:vmtouch python3:python3
work=$(mktemp -d "$dir/pagewise-trace.XXXXXX")
sock="$work/nbd.sock" log="$work/server.log"
tracer=
trap '[ -n "$tracer" ] && kill "$tracer" 2>/dev/null; cleanup' EXIT INT TERM
file="$work/data.raw"
head -c "$size" /dev/urandom > "$file"
sync "$file" # dirty pages would stay cached through the eviction
vmtouch -q -e "$file"
start_server "pagewise-$mode" "$file"
strace -f -qq -p "$server_pid" -e trace=pread64,pwrite64,preadv,preadv2,pwritev,pwritev2,io_submit,fdatasync,fsync -o "$work/trace.txt" &
tracer=$!
sleep 1
fd=$(for f in /proc/"$server_pid"/fd/*; do [ "$(readlink "$f")" != "$file" ] || basename "$f"; done | head -1)
nbdcopy --request-size=2097152 "nbd+unix:///?socket=$sock" null:
/usr/bin/python3 - "$sock" <<'PY'
import os, sys, nbd
h = nbd.NBD()
h.connect_unix(sys.argv[1])
data = os.urandom(4 << 20)
for i in range(16):
    h.pwrite(data, i * len(data), nbd.CMD_FLAG_FUA)
h.shutdown()
PY
sleep 0.5
kill "$tracer"; wait "$tracer" 2>/dev/null || true
tracer=
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), pagewise serve --cache=$mode, $(stat -c %s "$file") bytes"
echo "# nbdcopy --request-size=2097152 (read all), then 16 x 4 MiB WRITE with FUA"
# strace -f splits a call that another thread interrupts into '<unfinished ...>' and '<... resumed>' lines.
python3 - "$work/trace.txt" "$fd" <<'PY'
import collections, re, sys
fd = sys.argv[2]
pending, calls = {}, collections.Counter()
for line in open(sys.argv[1]):
    pid, rest = line.split(None, 1)  # strace pads the pid column: one space or more
    if "<unfinished ...>" in rest:
        pending[pid] = rest.split("<unfinished")[0]
        continue
    m = re.match(r"<\.\.\. (\w+) resumed>(.*)", rest)
    if m:
        rest = pending.pop(pid, m.group(1) + "(") + m.group(2)
    m = re.match(r"(\w+)\((.*)\)\s+= (-?\d+)", rest.strip())
    if not m:
        continue
    name, args, result = m.groups()
    if name == "io_submit":
        # DIRECT writes: one iocb per call; count it as its pwritev, with its flags and its iovecs' bytes.
        m = re.search(r"aio_lio_opcode=(\w+)", args)
        fildes = re.search(r"aio_fildes=(\d+)", args)
        if not m or not fildes or fildes.group(1) != fd:
            continue
        flags = re.search(r"aio_rw_flags=([\w|]+)", args)
        bytes_ = sum(int(n) for n in re.findall(r"iov_len=(\d+)", args))
        calls[("io_submit " + m.group(1), flags.group(1) if flags else "", str(bytes_))] += 1
        continue
    if args.split(",")[0] != fd:
        continue  # the JVM reading its own jar and class files
    flags = ""
    if name.endswith("2"):
        raw = args.rsplit(",", 1)[1].strip()
        flags = raw.replace("0x80 /* RWF_??? */", "RWF_DONTCACHE").replace("|0x80", "|RWF_DONTCACHE")
    if name in ("fdatasync", "fsync"):
        calls[(name, "", "")] += 1
    else:
        calls[(name, flags, result)] += 1
print("calls  syscall  flags  bytes")
for (name, flags, result), n in sorted(calls.items()):
    print(n, name, flags or "-", result or "-")
PY
stop_server
echo "resident after the server stopped: $(resident_percent "$file") %"
