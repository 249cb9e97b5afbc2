#!/usr/bin/env bash
# Does 64-bit BLOCK_STATUS (NBD extended headers) change anything for a huge sparse image? A sparse file of SIZE
# (default 16 TiB minus 4 KiB, the largest ext4 allows) holding 4 islands of 1 MiB of data is mapped and copied,
# ROUNDS times each (default 5), with and without extended headers:
#   serve   bin/pagewise serve FILE, read by nbdinfo --map URI and nbdcopy URI null: from libnbd 1.22 (extended
#           headers; from the Debian trixie root ROOT, default /opt/trixie, through chroot) and from the system's
#           libnbd 1.14 (compact). Each client gets a server of its own, whose --stats count its BLOCK_STATUS requests.
#   copy    bin/pagewise copy URI null: from qemu-nbd 10 (ROOT, extended) and qemu-nbd 7.2 (system, compact),
#           and from bin/pagewise serve, with this checkout's jar (extended) and with BEFORE_JAR (a build from
#           before extended headers, compact; skipped when unset).
# Prints one line per run: the seconds it took (wall, client start to exit). Then BLOCK_STATUS requests per run.
# Usage: jmh/extended-headers.sh [-s SIZE] [-r ROUNDS] [-w DIR (default /var/tmp)] [-R ROOT] [-b BEFORE_JAR]
# Needs: nbdinfo, nbdcopy, qemu-nbd, bc; root (chroot) and the trixie root with libnbd-bin and qemu-utils.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=$((16 * 2 ** 40 - 4096)) rounds=5 dir=/var/tmp newest=/opt/trixie before=
parse_options s=size r=rounds w=dir R=newest b=before -- "$@"
require_tools nbdinfo:libnbd-bin nbdcopy:libnbd-bin qemu-nbd:qemu-utils bc:bc
pagewise="$root/bin/pagewise"
"$pagewise" --version >/dev/null # builds the jar first when it is stale, outside the timings
# Sockets go under /tmp, which the trixie root shares.
work=$(mktemp -d /tmp/pagewise-exthdr.XXXXXX)
image=$(mktemp "$dir/pagewise-exthdr.XXXXXX.raw")
trap 'cleanup; rm -f "$image"' EXIT INT TERM
truncate -s "$size" "$image"
bytes=$(stat -c %s "$image")
for i in 0 1 2 3; do
    head -c 1M /dev/urandom | dd of="$image" bs=1M seek=$(( (bytes - (1 << 20)) / 3 * i / (1 << 20) )) conv=notrunc \
        status=none
done
socket="$work/nbd.sock" uri="nbd+unix:///?socket=$work/nbd.sock"
newest() { chroot "$newest" "$@"; }

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), SIZE=$bytes bytes, 4 MiB of data, $(nproc) CPUs," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# newest: $(newest nbdinfo --version | head -1), $(newest qemu-nbd --version | head -1);" \
    "system: $(nbdinfo --version | head -1), $(qemu-nbd --version | head -1)"

# serve_runs NAME CLIENT...: ROUNDS timed runs of CLIENT against a pagewise serve of its own; its BLOCK_STATUS count.
serve_runs() {
    local name=$1 stats="$work/stats-$1" _
    shift
    rm -f "$socket"
    "$pagewise" serve --read-only --socket="$socket" --stats="$stats" "$image" >"$work/serve.log" 2>&1 &
    server_pid=$!
    wait_for_unix_socket "$socket" "pagewise serve" "$work/serve.log"
    for _ in $(seq "$rounds"); do printf '%-34s %8.2f s\n' "$name" "$(timed "$@")"; done
    stop_server
    echo "$name: BLOCK_STATUS requests per run: $(awk '$1 == "BLOCK_STATUS" { print $2 }' "$stats")/$rounds"
}

# qemu_runs NAME QEMU-NBD... : ROUNDS timed pagewise copies from that qemu-nbd.
qemu_runs() {
    local name=$1 _
    shift
    rm -f "$socket"
    "$@" -f raw -r -t -k "$socket" "$image" >"$work/qemu.log" 2>&1 &
    server_pid=$!
    wait_for_unix_socket "$socket" "qemu-nbd" "$work/qemu.log"
    for _ in $(seq "$rounds"); do printf '%-34s %8.2f s\n' "$name" "$(timed "$pagewise" copy "$uri" null:)"; done
    stop_server
}

serve_runs "nbdinfo --map, libnbd 1.22" newest nbdinfo --map "$uri"
serve_runs "nbdinfo --map, libnbd 1.14" nbdinfo --map "$uri"
serve_runs "nbdcopy to null:, libnbd 1.22" newest nbdcopy "$uri" null:
serve_runs "nbdcopy to null:, libnbd 1.14" nbdcopy "$uri" null:
serve_runs "pagewise copy to null:" "$pagewise" copy "$uri" null:
if [ -n "$before" ]; then
    PAGEWISE_JAR=$before serve_runs "pagewise copy to null:, before" "$pagewise" copy "$uri" null:
fi
qemu_runs "pagewise copy from qemu-nbd 10" newest qemu-nbd
qemu_runs "pagewise copy from qemu-nbd 7.2" qemu-nbd
