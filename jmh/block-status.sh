#!/usr/bin/env bash
# Cost of BLOCK_STATUS on a file with many extents: what a server pays should follow the descriptors it sends, not
# the range it was asked about. Creates a file of SIZE (default 4 GiB) alternating 4 KiB of data and 4 KiB of hole
# (SIZE / 4 KiB extents, a million for 4 GiB), reads its data once into the page cache, then for each server
# (pagewise serve -r, qemu-nbd -r, nbdkit file; those missing are skipped):
#   status    8 connections at once each send one BLOCK_STATUS for the whole export (as much of it as one
#             request can ask: 4 GiB - 4 KiB at most); prints the slowest and the mean seconds, the descriptors
#             of one reply, and the server's RSS before and its peak (VmHWM) after, in MiB
#   nbdcopy   nbdcopy $uri null: with its defaults; prints seconds (wall), with a fresh server
# PAGEWISE_JAR measures that jar (say, a build of another commit) as bin/pagewise honours it.
# Usage: jmh/block-status.sh [-s SIZE] [-w DIR (default /var/tmp)] [-r ROUNDS (default 1)]
# Needs: python3 with libnbd (python3-libnbd), nbdcopy (libnbd-bin); qemu-nbd (qemu-utils) and nbdkit for theirs.
set -euo pipefail
usage() { echo "usage: jmh/block-status.sh [-s SIZE] [-w DIR] [-r ROUNDS]"; }
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=4G dir=/var/tmp rounds=1
parse_options s=size w=dir r=rounds -- "$@"
require_tools python3:python3 nbdcopy:libnbd-bin nbdinfo:libnbd-bin
# The libnbd binding is in the system Python's dist-packages, which a pyenv or venv python3 may not see.
python=python3
"$python" -c 'import nbd' 2>/dev/null || python=/usr/bin/python3
"$python" -c 'import nbd' 2>/dev/null || { echo "block-status: install python3-libnbd" >&2; exit 1; }
pagewise="$root/bin/pagewise"
"$pagewise" --version >/dev/null # builds the jar first when it is stale, outside the timings
work=$(mktemp -d "$dir/pagewise-block-status.XXXXXX")
trap cleanup EXIT INT TERM

src="$work/alternating.raw" sock="$work/nbd.sock"
bytes=$(numfmt --from=iec "$size")
python3 - "$src" "$bytes" <<'EOF'
import os, sys
path, size = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.ftruncate(fd, size)
block = b"\xab" * 4096
for offset in range(0, size, 8192):
    os.pwrite(fd, block, offset)
os.fsync(fd)
os.close(fd)
EOF
cat "$src" >/dev/null # the data in the page cache: the runs measure the servers, not the disk
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(df -T "$work" | awk 'NR == 2 { print $2 }') in $dir," \
    "SIZE=$bytes bytes, $((bytes / 4096)) extents of 4 KiB, data cached, $(nproc) CPUs," \
    "jar ${PAGEWISE_JAR:-of this checkout}, JVM options ${PAGEWISE_JAVA_OPTS-as bin/pagewise sets them}"

uri="nbd+unix:///?socket=$sock"
start() { # start NAME COMMAND...: starts a server on $sock in the background and waits for it
    local name=$1
    shift
    rm -f "$sock"
    "$@" >"$work/server.log" 2>&1 &
    server_pid=$!
    wait_for_unix_socket "$sock" "$name" "$work/server.log"
    # The socket may exist a moment before the server answers.
    wait_for_server "$name" "$work/server.log" answers
}
answers() { nbdinfo --size "$uri" >/dev/null; }
servers=(pagewise)
command -v qemu-nbd >/dev/null && servers+=(qemu-nbd)
command -v nbdkit >/dev/null && servers+=(nbdkit)
launch() {
    case $1 in
        pagewise) start pagewise "$pagewise" serve -r --socket="$sock" "$src" ;;
        qemu-nbd) start qemu-nbd qemu-nbd -r -t -e 16 -f raw -k "$sock" "$src" ;;
        nbdkit) start nbdkit nbdkit -f -r -U "$sock" file "$src" ;;
    esac
}
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
status_row() {
    local name=$1 before after result
    before=$(awk '/^VmRSS/ { print $2 }' "/proc/$server_pid/status")
    result=$("$python" - "$uri" "$bytes" <<'EOF'
import sys, threading, time, nbd
uri, size = sys.argv[1], int(sys.argv[2])
length = min(size, (1 << 32) - 4096)
handles = []
for _ in range(8):
    h = nbd.NBD()
    h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
    h.connect_uri(uri)
    handles.append(h)
seconds, descriptors = [0.0] * 8, [0] * 8
go = threading.Barrier(8)
def one(i):
    def extent(metacontext, offset, entries, err):
        descriptors[i] += len(entries) // 2
    go.wait()
    start = time.monotonic()
    handles[i].block_status(length, 0, extent)
    seconds[i] = time.monotonic() - start
threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
for h in handles: h.shutdown()
print("%.3f %.3f %d" % (max(seconds), sum(seconds) / 8, descriptors[0]))
EOF
)
    after=$(awk '/^VmHWM/ { print $2 }' "/proc/$server_pid/status")
    read -r slowest mean count <<<"$result"
    echo "$name status slowest_s=$slowest mean_s=$mean descriptors=$count rss_mib=$(mib "$before")->$(mib "$after")"
}
for _ in $(seq 1 "$rounds"); do
    for name in "${servers[@]}"; do
        launch "$name"
        status_row "$name"
        stop_server
        launch "$name"
        echo "$name nbdcopy seconds=$(timed nbdcopy "$uri" null:)"
        stop_server
    done
done
