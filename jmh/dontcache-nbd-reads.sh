#!/usr/bin/env bash
# DONTCACHE reads over NBD, both ways: `pagewise serve --cache=dontcache` with RWF_DONTCACHE only on reads that
# cover whole 2 MiB windows (-Dpagewise.dontcache.reads=windows, the default; smaller reads are plain reads
# evicted behind the reader as in EVICT) and on every read (=all). nbdcopy reads the whole cold file to null:
# (its default: 256 KiB requests, 4 connections x 64 in flight). Per run: seconds, the bytes the disk read
# (sectors read in /sys/dev/block/MAJ:MIN/stat, before and after; other reads of that disk count too, so every run
# is printed), the server's CPU seconds (user + system, from /proc), RWF_DONTCACHE preadv2 calls (strace -c, in a
# separate run when -S is given) and the residency left (vmtouch). The file is evicted before every run.
#
# Usage: jmh/dontcache-nbd-reads.sh [-s SIZE (default 2G)] [-r ROUNDS (default 3)] [-d DIR (default /var/tmp)]
# Needs: nbdcopy, vmtouch, a built jar (mvn -q package -DskipTests), Linux >= 6.14 on a file system taking
# RWF_DONTCACHE (ext4 >= 6.17, XFS >= 6.15).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/servers.sh
source "$root/jmh/servers.sh"
size=2G rounds=3 dir=/var/tmp
parse_options s=size r=rounds d=dir -- "$@"
require_tools nbdcopy:libnbd-bin vmtouch:vmtouch bc:bc python3:python3
work=$(mktemp -d "$dir/pagewise-dcreads.XXXXXX")
sock="$work/nbd.sock" log="$work/server.log"
trap cleanup EXIT INT TERM
file="$work/data.raw"
head -c "$size" /dev/urandom > "$file"
sync "$file"
bytes=$(stat -c %s "$file")
dev=$(printf '%d:%d' "$(stat -c '0x%t' "$(df --output=source "$file" | tail -1)")" "$(stat -c '0x%T' "$(df --output=source "$file" | tail -1)")")
stat_file=/sys/dev/block/$dev/stat
[ -r "$stat_file" ] || { echo "dontcache-nbd-reads: no $stat_file" >&2; exit 1; }
sectors() { awk '{ print $3 }' "$stat_file"; }
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $bytes bytes in $dir ($(df --output=fstype "$dir" | tail -1)), nbdcopy $(nbdcopy --version | head -1 | awk '{print $2}')"
echo "round reads seconds disk_read/file server_cpu_s resident_percent"
results=$(mktemp)
for round in $(seq 1 "$rounds"); do
    for reads in windows all; do
        vmtouch -q -e "$file"
        export PAGEWISE_JAVA_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dpagewise.dontcache.reads=$reads"
        start_server pagewise-dontcache "$file"
        java_pid=$(pgrep -P "$server_pid" java || echo "$server_pid")
        before=$(sectors)
        start=$(date +%s.%N)
        nbdcopy "nbd+unix:///?socket=$sock" null:
        end=$(date +%s.%N)
        after=$(sectors)
        cpu=$(cpu_seconds "$java_pid")
        stop_server
        line=$(printf '%s %s %.2f %.2f %s %s' "$round" "$reads" "$(echo "$end - $start" | bc -l)" \
            "$(echo "($after - $before) * 512 / $bytes" | bc -l)" "$cpu" "$(resident_percent "$file")")
        echo "$line" | tee -a "$results"
    done
done
echo
echo "median per way: seconds disk_read/file server_cpu_s resident_percent"
for reads in windows all; do
    awk -v r="$reads" '$2 == r' "$results" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin]
print(rows[0][1], *("%.2f" % statistics.median(float(r[i]) for r in rows) for i in range(2, 6)))'
done
rm -f "$results"
