#!/usr/bin/env bash
# How many writes a server keeps in flight at the disk: for each config (as in jmh/servers.sh), nbdcopy writes a
# cached file of random data into a sparse file (truncate -s) served by it, while /sys/block/DEV/inflight is
# sampled every 10 ms. Prints per run: wall seconds, the disk's write requests and their mean size (from
# /sys/block/DEV/stat), and the mean and largest number of writes in flight. The disk is shared: other I/O on it
# during the run is counted too.
#
# Usage: jmh/disk-inflight.sh [-s SIZE (default 2G)] [-r ROUNDS (default 1)] [-d DIR (default /var/tmp)] CONFIG...
# Needs: nbdcopy, vmtouch, nbdkit/qemu-nbd for their configs. Installs nothing itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/servers.sh
source "$root/jmh/servers.sh"
size=2G rounds=1 dir=/var/tmp
parse_options s=size r=rounds d=dir -- "$@"
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage_error
require_tools nbdcopy:libnbd-bin vmtouch:vmtouch bc:bc
work=$(mktemp -d "$dir/pagewise-inflight.XXXXXX")
sock="$work/nbd.sock" log="$work/server.log"
sampler=
trap '[ -n "$sampler" ] && kill "$sampler" 2>/dev/null; cleanup' EXIT INT TERM
device=$(lsblk -no PKNAME "$(findmnt -n -o SOURCE --target "$dir")" 2>/dev/null || true)
[ -n "$device" ] || device=$(basename "$(findmnt -n -o SOURCE --target "$dir")")
head -c "$size" /dev/urandom > "$work/source.raw"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $size into a sparse file in $dir (/sys/block/$device)"
echo "round config seconds write_requests mean_KiB mean_inflight max_inflight"
for round in $(seq 1 "$rounds"); do
    for config in "$@"; do
        vmtouch -q -t "$work/source.raw"
        rm -f "$work/target.raw"
        truncate -s "$(stat -c %s "$work/source.raw")" "$work/target.raw"
        start_server "$config" "$work/target.raw"
        read -r -a before < "/sys/block/$device/stat"
        ( while :; do cat "/sys/block/$device/inflight"; sleep 0.01; done ) > "$work/inflight.txt" &
        sampler=$!
        start=$(date +%s.%N)
        nbdcopy --flush "$work/source.raw" "nbd+unix:///?socket=$sock"
        end=$(date +%s.%N)
        kill "$sampler"; wait "$sampler" 2>/dev/null || true
        sampler=
        stop_server
        read -r -a after < "/sys/block/$device/stat"
        requests=$((after[4] - before[4]))
        sectors=$((after[6] - before[6]))
        echo "$round $config $(echo "$end - $start" | bc -l | xargs printf '%.3f') $requests" \
            "$((requests > 0 ? sectors / 2 / requests : 0))" \
            "$(awk '{ s += $2; n++ } END { printf "%.1f", n ? s / n : 0 }' "$work/inflight.txt")" \
            "$(awk 'm < $2 { m = $2 } END { print m + 0 }' "$work/inflight.txt")"
        rm -f "$work/target.raw"
    done
done
