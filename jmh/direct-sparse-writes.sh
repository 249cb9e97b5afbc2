#!/usr/bin/env bash
# Why DIRECT writes go by io_submit: times many threads writing a sparse file (truncate -s) in 256 KiB O_DIRECT
# writes made three ways (plain pwrite, fallocate of the range then pwrite, io_submit and wait), and plain pwrite
# into an allocated file (fallocate -l) for reference, in alternating rounds. Prints one line per run
# (round, case, seconds) and the median seconds of each case. See jmh/direct-sparse-writes.c.
#
# Usage: jmh/direct-sparse-writes.sh [-s SIZE_MIB (default 2048)] [-t THREADS (default 8)] [-r ROUNDS (default 3)]
#                                    [-d DIR (default /var/tmp; must not be tmpfs)]
# Needs: gcc. Installs nothing itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=2048 threads=8 rounds=3 dir=/var/tmp
parse_options s=size t=threads r=rounds d=dir -- "$@"
require_tools gcc:gcc
work=$(mktemp -d "$dir/pagewise-sparse.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
gcc -O2 -Wall -Wextra -Werror -pthread -o "$work/writer" "$root/jmh/direct-sparse-writes.c"
file="$work/target.raw"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(findmnt -n -o FSTYPE --target "$dir") in $dir," \
    "$size MiB, $threads threads, 256 KiB O_DIRECT writes"
echo "round case seconds"
for round in $(seq 1 "$rounds"); do
    for case in sparse-pwrite sparse-fallocate sparse-aio allocated-pwrite; do
        rm -f "$file"
        if [ "$case" = allocated-pwrite ]; then fallocate -l "${size}M" "$file"; else truncate -s "${size}M" "$file"; fi
        echo "$round $case $("$work/writer" "$file" "${case#*-}" "$threads" "$size")"
    done
done | tee "$work/runs.txt"
echo "median seconds:"
for case in sparse-pwrite sparse-fallocate sparse-aio allocated-pwrite; do
    awk -v c="$case" '$2 == c { print $3 }' "$work/runs.txt" | sort -n \
        | awk -v c="$case" '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %.3f\n", c, m }'
done
