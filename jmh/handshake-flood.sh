#!/usr/bin/env bash
# A flood of idle connections: N connections (default 500) opened to a Unix socket and left silent before the handshake,
# then `nbdinfo --size`, timed, with the server's Threads and VmRSS (/proc/PID/status) before, during and after.
# Runs it against pagewise serve (bin/pagewise, so PAGEWISE_JAR and PAGEWISE_JAVA_OPTS are honoured), nbdkit's
# file plugin and qemu-nbd --shared=64, or only the servers named.
# Usage: jmh/handshake-flood.sh [N] [pagewise|nbdkit|qemu-nbd ...]
# Needs (Debian): libnbd-bin (nbdinfo), nbdkit, qemu-utils (qemu-nbd), python3. Installs nothing itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
count=${1:-500}
shift || true
if [ $# -gt 0 ]; then servers=("$@"); else servers=(pagewise nbdkit qemu-nbd); fi
require_tools nbdinfo:libnbd-bin python3:python3
work=$(mktemp -d /var/tmp/pagewise-flood.XXXXXX)
trap cleanup EXIT INT TERM
truncate -s 64M "$work/disk.raw"

cat > "$work/flood.py" <<'PY'
import socket, subprocess, sys, time
path, count, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def status():
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status") if ":" in line)
    return f"Threads {fields['Threads'].strip()}, VmRSS {fields['VmRSS'].strip()}"
def connect():
    deadline = time.time() + 5
    while True:
        s = socket.socket(socket.AF_UNIX)
        s.setblocking(False)
        try:
            s.connect(path)
            return s
        except BlockingIOError:  # the listen backlog is full: the server is not accepting
            s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.01)
print("  before:", status())
flood = []
started = time.time()
for i in range(count):
    try:
        flood.append(connect())
    except OSError as e:
        print(f"  connection {i + 1} not accepted within 5 s ({e}): flood stopped there")
        break
print(f"  {len(flood)} silent connections opened in {time.time() - started:.2f} s")
time.sleep(1)
print("  flooded:", status())
started = time.time()
info = subprocess.run(["nbdinfo", "--size", f"nbd+unix:///?socket={path}"], capture_output=True, text=True)
print(f"  nbdinfo --size: exit {info.returncode} after {time.time() - started:.2f} s:",
      (info.stdout + info.stderr).strip())
print("  after:", status())
for s in flood:
    s.close()
PY

for server in "${servers[@]}"; do
    sock="$work/$server.sock"
    case $server in
        # bin/pagewise execs java, so $! is the JVM's pid.
        pagewise) "$root/bin/pagewise" serve --socket="$sock" "$work/disk.raw" >"$work/log" 2>&1 & ;;
        nbdkit) nbdkit -f -U "$sock" file "$work/disk.raw" >"$work/log" 2>&1 & ;;
        qemu-nbd) qemu-nbd -t --shared=64 -f raw -k "$sock" "$work/disk.raw" >"$work/log" 2>&1 & ;;
        *) echo "unknown server $server" >&2; exit 2 ;;
    esac
    server_pid=$!
    wait_for_unix_socket "$sock" "server $server" "$work/log"
    echo "$server ($(tr '\0' ' ' < "/proc/$server_pid/cmdline" | sed 's/ $//')):"
    python3 "$work/flood.py" "$sock" "$count" "$server_pid"
    stop_server
done
