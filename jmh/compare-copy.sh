#!/usr/bin/env bash
# pagewise copy against nbdcopy on the same endpoints, in interleaved rounds (order swapped each round):
#   file-file    a file of random data to a new file
#   nbd-file     from an NBD server (nbdkit file cache=none, and pagewise serve --cache=evict) to a new file
#   file-nbd     from a file to an NBD server over a sparse file (same two servers)
#   sparse       a sparse image (SIZE x 8, SIZE of data in 4 islands) to a new file
# Sources are evicted before every run. Prints median seconds per tool, the median paired ratio
# (pagewise / nbdcopy in the same round) and the destination's and source's residency after the run.
#
# Needs: nbdcopy (libnbd-bin), nbdkit, vmtouch, and the jar (mvn -q package -DskipTests).
set -euo pipefail

usage() { echo "usage: jmh/compare-copy.sh [-s SIZE (default 1G)] [-r ROUNDS (default 3)] [-d DIR (default /var/tmp)] [-t TESTS]"; }
root=$(cd "$(dirname "$0")/.." && pwd)
size=1G rounds=3 dir=/var/tmp tests=file-file,nbd-file,file-nbd,sparse
while getopts "s:r:d:t:h" opt; do
    case $opt in
        s) size=$OPTARG ;; r) rounds=$OPTARG ;; d) dir=$OPTARG ;; t) tests=$OPTARG ;;
        h) usage; exit 0 ;; *) usage >&2; exit 2 ;;
    esac
done
for tool in nbdcopy nbdkit vmtouch; do
    command -v "$tool" >/dev/null || { echo "compare-copy: $tool is missing" >&2; exit 1; }
done
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

resident() { vmtouch "$1" | awk '/Resident Pages/ {print $NF}'; }

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
    local dst_res=- src_res
    [ -f "$work/dst.raw" ] && dst_res=$(resident "$work/dst.raw")
    [ "$test" = file-nbd ] && dst_res=$(resident "$served")
    src_res=$(resident "$([ "$test" = sparse ] && echo "$sparse" || echo "$src")")
    echo "$(cat "$timing") $dst_res $src_res"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf "%-18s %10s %10s %8s %14s %14s\n" test pagewise nbdcopy ratio "dst resident" "src resident"
for test in ${tests//,/ }; do
    servers=none
    case $test in nbd-file|file-nbd) servers="nbdkit pagewise" ;; esac
    for server in $servers; do
        : > "$work/p" ; : > "$work/n"; : > "$work/r"
        for ((round = 0; round < rounds; round++)); do
            if ((round % 2 == 0)); then
                p=$(run pagewise "$test" "$server"); n=$(run nbdcopy "$test" "$server")
            else
                n=$(run nbdcopy "$test" "$server"); p=$(run pagewise "$test" "$server")
            fi
            echo "$p" >> "$work/p"; echo "$n" >> "$work/n"
            awk -v a="${p%% *}" -v b="${n%% *}" 'BEGIN {print a / b}' >> "$work/r"
        done
        label=$test; [ "$server" != none ] && label="$test($server)"
        printf "%-18s %10s %10s %8.2f %14s %14s\n" "$label" "$(cut -d' ' -f1 "$work/p" | median)" \
            "$(cut -d' ' -f1 "$work/n" | median)" "$(median < "$work/r")" \
            "$(tail -1 "$work/p" | cut -d' ' -f2)/$(tail -1 "$work/n" | cut -d' ' -f2)" \
            "$(tail -1 "$work/p" | cut -d' ' -f3)/$(tail -1 "$work/n" | cut -d' ' -f3)"
    done
done
