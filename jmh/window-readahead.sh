#!/usr/bin/env bash
# How a merge input's read window could be loaded: fadvise(WILLNEED), which PagewiseDirectory uses and which reads
# single 4 KiB pages, against faulting the window in through a mapping advised MADV_HUGEPAGE (one 2 MiB folio).
# Alternating rounds of jmh/window-readahead.c on one file; each line gives the disk's read requests, the MiB read,
# the milliseconds and the pages readahead cached past the windows. Nothing else should read that disk meanwhile.
#
# Usage: jmh/window-readahead.sh -f FILE [-w WINDOWS (default 32)] [-r ROUNDS (default 3)]
# Needs: gcc. The file must hold WINDOWS × 2 MiB; it is evicted before and after each run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
file= windows=32 rounds=3
parse_options f=file w=windows r=rounds -- "$@"
[ -n "$file" ] || { echo "window-readahead: -f FILE is required" >&2; exit 2; }
require_tools gcc:gcc
work=$(mktemp -d /tmp/pagewise-window-readahead.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
gcc -O2 -Wall -Wextra -Werror -o "$work/loader" "$root/jmh/window-readahead.c"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(findmnt -n -o FSTYPE --target "$file"), $file," \
    "$windows windows of 2 MiB, THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
for round in $(seq 1 "$rounds"); do
    ways=(willneed huge-random huge)
    for i in 0 1 2; do
        echo "round=$round $("$work/loader" "$file" "${ways[$(((i + round - 1) % 3))]}" "$windows")"
    done
done
