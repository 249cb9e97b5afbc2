#!/usr/bin/env bash
# pagewise copy against nbdcopy on the same endpoints, in interleaved rounds (order swapped each round):
#   file-file    a file of random data to a new file
#   nbd-file     from an NBD server (nbdkit file cache=none, and pagewise serve --cache=evict) to a new file
#   file-nbd     from a file to an NBD server over a sparse file (same two servers)
#   sparse       a sparse image (SIZE x 8, SIZE of data in 4 islands) to a new file
# Sources are evicted before every run. Every run is a row of OUT/copy.csv (seconds, and the residency of the
# destination and source files after the run; "-" for the file an NBD server holds, which is the server's
# business); jmh/summarize.sh then prints median seconds per tool, the median paired ratio (pagewise / nbdcopy
# in the same round) and the median residency.
#
# Needs: nbdcopy (libnbd-bin), nbdkit, vmtouch, and the jar (mvn -q package -DskipTests).
set -euo pipefail

usage() { echo "usage: jmh/compare-copy.sh [-s SIZE (default 1G)] [-r ROUNDS (default 3)] [-d DIR (default /var/tmp)] [-t TESTS] [-o OUT (default jmh/results)]"; }
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=1G rounds=3 dir=/var/tmp tests=file-file,nbd-file,file-nbd,sparse out="$root/jmh/results"
parse_options s=size r=rounds d=dir t=tests o=out -- "$@"
require_tools nbdcopy:libnbd-bin nbdkit:nbdkit vmtouch:vmtouch /usr/bin/time:time
pagewise="$root/bin/pagewise"
work=$(mktemp -d "$dir/pagewise-copy-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

src="$work/source.raw"
head -c "$size" /dev/urandom > "$src"
bytes=$(stat -c %s "$src")
sparse="$work/sparse.raw"
truncate -s $((bytes * 8)) "$sparse"
for i in 0 1 2 3; do
    dd if="$src" of="$sparse" bs=1M count=$((bytes / 4 / 1048576)) skip=$((i * bytes / 4 / 1048576)) \
        seek=$((i * bytes * 2 / 1048576)) conv=notrunc status=none
done
sync

# run TOOL TEST SERVER: prints "seconds dst-resident src-resident"
run() {
    local tool=$1 test=$2 server=$3 from to timing="$work/time"
    rm -f "$work/dst.raw" "$work/served.raw"
    vmtouch -q -e "$src" "$sparse"
    local copy=("$pagewise" copy)
    [ "$tool" = nbdcopy ] && copy=(nbdcopy)
    case $test in
        file-file) from=$src to=$work/dst.raw ;;
        sparse) from=$sparse to=$work/dst.raw ;;
        nbd-file) from='$uri' to=$work/dst.raw served=$src ;;
        file-nbd) from=$src to='$uri' served=$work/served.raw; truncate -s "$bytes" "$served" ;;
    esac
    local command="/usr/bin/time -o $timing -f %e ${copy[*]} $from $to"
    case $test:$server in
        *:none) sh -c "$command" ;;
        *:nbdkit) nbdkit -U - file "$served" cache=none --run "$command" ;;
        *:pagewise) "$pagewise" serve --socket="$work/pw.sock" --cache=evict "$served" --run "$command" >/dev/null ;;
    esac
    local dst_res=- src_res=-
    [ "$test" != file-nbd ] && dst_res=$(resident_percent "$work/dst.raw")
    [ "$test" != nbd-file ] && src_res=$(resident_percent "$([ "$test" = sparse ] && echo "$sparse" || echo "$src")")
    echo "$(cat "$timing") $dst_res $src_res"
}

mkdir -p "$out"
csv="$out/copy.csv"
echo "round,test,server,tool,seconds,dst_resident,src_resident" > "$csv"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $bytes bytes, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for test in ${tests//,/ }; do
    servers=none
    case $test in nbd-file|file-nbd) servers="nbdkit pagewise" ;; esac
    for server in $servers; do
        for ((round = 1; round <= rounds; round++)); do
            order="pagewise nbdcopy"
            ((round % 2 == 0)) && order="nbdcopy pagewise"
            for tool in $order; do
                read -r seconds dst_res src_res <<< "$(run "$tool" "$test" "$server")"
                echo "$round,$test,$server,$tool,$seconds,$dst_res,$src_res" | tee -a "$csv" >&2
            done
        done
    done
done
"$root/jmh/summarize.sh" "$csv"
